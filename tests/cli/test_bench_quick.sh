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
finish
