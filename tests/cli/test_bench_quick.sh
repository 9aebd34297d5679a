# The benchmarks' quick modes, so a bench never rots between the runs that measure: each runs
# once against the built trnslurm and its output is checked for what it reports, never for times.
source "$(dirname "$0")/lib.sh"
cd "$work"

out=$("$TRNSLURM_SOURCE_DIR/bench/plan-suggest" --quick --trnslurm "$TRNSLURM_BIN" 2>&1)
# Llama3-70B on 1..64 trn2.48xlarge: (8 TPs at lnc 1 + 7 at lnc 2) x 10 PPs x 64 node counts x 4 MBS.
expect_contains "plan-suggest searched the whole space" "search: 38400 configurations considered" "$out"
expect_contains "plan-suggest timed the plan" "plan:  " "$out"
expect_contains "plan-suggest timed the search" "plan --suggest " "$out"
expect_contains "plan-suggest states the target" "target < 1000 ms" "$out"

# dataset-count with its own recipe: both comparisons print their ratio, the plan counted every shard.
build=$(cd "$(dirname "$TRNSLURM_BIN")/.." && pwd)
out=$(TMPDIR=$work "$TRNSLURM_SOURCE_DIR/bench/dataset-count" --quick "$build" 2>&1)
expect_contains "dataset-count counted in process" "in-process: shards=200 " "$out"
expect_match "dataset-count printed the in-process ratio" "count_ms=[0-9.]+ ratio=[0-9.]+ " "$out"
expect_match "dataset-count printed the plan's ratio" "processes:  shards=200 .* ratio=[0-9.]+" "$out"

# state-json: a state.json of 20,000 and 2,000 shards read to the first missing shard, beside the
# parse alone and the callback parse before issue 31; both sizes and the growth printed.
out=$(TMPDIR=$work "$TRNSLURM_SOURCE_DIR/bench/state-json" --quick "$build" 2>&1)
for n in 2000 20000; do
  expect_match "state-json read $n shards" "state.json: shards=$n bytes=[0-9]+ parse_ms=[0-9.]+ read_ms=[0-9.]+ ratio=[0-9.]+ before_ms=[0-9.]+ before_ratio=[0-9.]+" "$out"
done
expect_match "state-json printed the growth" "growth for 10x the shards: read=[0-9.]+ before=[0-9.]+" "$out"

# The same on the simulated shared file system (FUSE, 200 us a request): every arm ran and the
# file system counted its requests (a count, not a time: 8 per shard for 4 record batches).
out=$(TMPDIR=$work "$TRNSLURM_SOURCE_DIR/bench/dataset-count" --quick --latency 200 "$build" 2>&1)
for arm in "stat(2) of every shard, 16 threads" "count, 16 readers (default)" "trnslurm plan --dataset (16 readers)" \
  "count, 1 reader (before)"; do
  expect_match "dataset-count --latency: $arm" "^  ${arm//[()]/.} +[0-9.]+ ms .* ratio to stat16 [0-9.]+" "$out"
done
expect_match "dataset-count --latency: one lookup per shard for stat" "16 threads +[0-9.]+ ms +1\.0[0-9] requests/shard" "$out"
expect_match "dataset-count --latency: the count's requests" "16 readers .default. +[0-9.]+ ms +8\.0[0-9] requests/shard" "$out"

# hostile: every case of issue 31 refused as it should be (the bench exits 1 on a wrong exit code)
# and each printed its time and memory; the summary names the target.
out=$("$TRNSLURM_SOURCE_DIR/bench/hostile" --quick --trnslurm "$TRNSLURM_BIN" 2>&1) || fail "bench/hostile: $out"
checks=$((checks + 1))
for case in "recipe is a FIFO" "recipe of 2 GiB" "recipe header 250,000 deep" "site instances 250,000 deep" \
  "manifest is a FIFO (status)" "watch --interval nan" "placeholder as code" "state.json of 2,000 shards" \
  "state.json of 20,000 shards" "state.json of 1,000,001 values"; do
  expect_match "hostile: $case refused, measured" "^  ${case//[().]/.} +2 +[0-9.]+ +[0-9.]+ +-?[0-9.]+  (yes|NO)$" "$out"
done
expect_match "hostile: per-shard memory" "^state.json: -?[0-9.]+ MB more per 10,000 shards more .2,000 to 20,000 shards.$" "$out"
expect_match "hostile: the target" "^target: every case <= 1000 ms and <= 16 MB above --version .*: (met|NOT met by .*)$" "$out"
finish
