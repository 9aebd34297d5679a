# status and watch read the train stage's progress from the trainer's own lines (docs/progress.md),
# and plan --from-run uses the rate a run measured; with a stand-in squeue, so no cluster is needed
# (the chain on a real cluster: tests/integration/test_demo_chain.sh).
source "$(dirname "$0")/lib.sh"
source "$TRNSLURM_SOURCE_DIR/tests/lib/fake_squeue.sh"
cd "$work"
fake_squeue "$work/fake"
fixture=$TRNSLURM_SOURCE_DIR/tests/fixtures/progress/run_llama_nxd.log

run init tiny-cpu
run submit --dry-run --samples 4096 --json
chain=$(json 'j["chain_id"]')
ckpt=$(json 'j["checkpoint_dir"]')
expect_eq "the chain's own checkpoint directory" "$work/checkpoints/$chain" "$ckpt"
rd=$work/runs/$chain
printf 'job convert 101\njob precompile 102\njob train 103\njob convert_back 104\nstate submitted\n' >>"$rd/journal"
fake_state 101 COMPLETED
fake_state 102 COMPLETED
fake_state 103 PENDING
fake_state 104 PENDING
total=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total_steps"])' "$rd/plan.json")

run status --json
expect_eq "status before train starts: exit" 3 "$rc"
expect_eq "status before train starts: no progress" "None" "$(json 'j["progress"]')"

# Mid-train: the stand-in's first two lines ("step 0", "step 1": run_llama_nxd logs before counting).
fake_state 103 RUNNING
mkdir -p "$rd/logs"
grep -v '^step [23] \|finished' "$fixture" >"$rd/logs/train-103.out"
tps=$(sed -n 's/^step 1 .* throughput \([^ ]*\) seq.*/\1/p' "$fixture")
tps0=$(sed -n 's/^step 0 .* throughput \([^ ]*\) seq.*/\1/p' "$fixture")
run status --json
expect_eq "status mid-train: exit" 3 "$rc"
expect_eq "status mid-train: step, total" "2 $total" "$(json 'j["progress"]["step"], j["progress"]["total_steps"]')"
expect_eq "status mid-train: an ETA, not finished" "True False" \
  "$(json 'j["progress"]["eta_seconds"] > 0, j["progress"]["finished"]')"
# tokens/s per node: the mean of the lines' seq/s x seq_len 32 / 2 nodes; seconds a step: gbs 8 / seq/s.
expect_eq "status mid-train: tokens/s per node" \
  "$(/usr/bin/python3 -c "print(round(($tps + $tps0) / 2 * 32 / 2, 6))")" \
  "$(json 'round(j["progress"]["tokens_per_second_per_node"], 6)')"
expect_eq "status mid-train: against the recipe's estimate (2000)" \
  "$(/usr/bin/python3 -c "print(round(($tps + $tps0) / 2 * 32 / 2 / 2000, 6))")" \
  "$(json 'round(j["progress"]["measured_vs_estimate"], 6)')"
expect_eq "status mid-train: loss" "$(sed -n 's/^step 1 .* step loss \([^ ]*\) grad.*/\1/p' "$fixture")" \
  "$(json 'repr(j["progress"]["loss"])')"
run status
expect_contains "status text: step/total" "train progress: step 2/$total" "$out"
expect_contains "status text: rate" "per node; " "$out"

# Only what the log gained is read: the kept offset is the log's size.
offset() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["state"]["offset"])' "$rd/logs/.train-progress.json"; }
expect_eq "the reading state's offset" "$(stat -c %s "$rd/logs/train-103.out")" "$(offset)"

# Hostile lines in between: a huge one, binary, one cut short; then the next real step.
{
  head -c 3000000 /dev/zero | tr '\0' 'x'
  printf '\n'
  head -c 4096 /dev/urandom
  printf '\nstep 7 step_time 0.5s throughput 1e9 seq/s step lo\n'
  grep '^step 2 ' "$fixture"
} >>"$rd/logs/train-103.out"
run status --json
expect_eq "after hostile lines: the next real step, never a figure from them" "3" "$(json 'j["progress"]["step"]')"
expect_eq "after hostile lines: offset at the end" "$(stat -c %s "$rd/logs/train-103.out")" "$(offset)"

# A checkpoint and a restart.
mkdir -p "$ckpt/step_2" "$ckpt/step_3"
touch "$ckpt/step_2/done"  # step_3 has no done file: still being written
printf '{"event":"restart","cause":"node-failure","restart":1,"job":103,"time":%s,"resumed_from":2}\n' \
  "$(date +%s)" >"$rd/logs/train-restarts.jsonl"
run status --json
expect_eq "checkpoint step, restarts" "2 1" "$(json 'j["progress"]["checkpoint_step"], j["progress"]["restarts"]')"
run status
expect_contains "status text: checkpoint and restarts" "last checkpoint step 2" "$out"
expect_contains "status text: restarts" "restarts 1" "$out"

# Stalled: the newest step line was written an hour ago (read afresh: the state file removed).
touch -d '1 hour ago' "$rd/logs/train-103.out"
rm "$rd/logs/.train-progress.json"
run status --json
expect_eq "stalled" "True" "$(json 'j["progress"]["stalled"]')"
run status
expect_contains "status text: stalled" "STALLED: no new step for" "$out"

# plan --from-run: the wall time at the rate the run measured.
run plan --samples 4096 --from-run "$chain" --json
expect_eq "plan --from-run: exit" 0 "$rc"
measured=$(json 'j["estimate"]["tokens_per_second_per_node"]')
expect_contains "plan --from-run: rate from the run" "measured by run $chain at step 3" "$(json 'j["estimate"]["rate_from"]')"
run plan --samples 4096
expect_contains "plan: rate from the recipe" "2000 tokens/s per node (recipe)" "$out"
run plan --samples 4096 --from-run latest
expect_contains "plan --from-run latest" "tokens/s per node (measured by run $chain at step 3)" "$out"
run plan --samples 4096 --from-run 20990101-000000-000-00000000
expect_eq "plan --from-run of an unknown chain: exit" 2 "$rc"
[ "$(/usr/bin/python3 -c "print(float('$measured') > 0)")" = True ] || fail "plan --from-run: no measured rate"

# The end: the trainer's last lines, every stage done: the final figures.
grep '^step 3 \|finished' "$fixture" >>"$rd/logs/train-103.out"
fake_state 103 COMPLETED
fake_state 104 COMPLETED
run status --json
expect_eq "finished chain: exit" 0 "$rc"
expect_eq "finished chain: final step, finished, no ETA, not stalled" "4 True None False" \
  "$(json 'j["progress"]["step"], j["progress"]["finished"], j["progress"]["eta_seconds"], j["progress"]["stalled"]')"
run status
expect_contains "status text: final" "train final: step 4/$total" "$out"

# report: PNG and SVG drawn by matplotlib, one attempt per restart the log shows, restarts marked.
run report --json
expect_eq "report: exit" 0 "$rc"
expect_eq "report: lines, attempts, restarts" "4 1 1" "$(json 'j["step_lines"], j["attempts"], j["restarts"]')"
expect_eq "report: a PNG" "89504e47" "$(head -c 4 "$rd/progress.png" | od -An -tx1 | tr -d ' \n')"
expect_contains "report: an SVG" "<svg" "$(head -c 2000 "$rd/progress.svg")"
expect_eq "report: the restart marked at the step it resumed from" "[2]" \
  "$(/usr/bin/python3 -c 'import json, sys; print([r["step"] for r in json.load(open(sys.argv[1]))["restarts"]])' "$rd/progress.json")"
run report -o "$work/pic"
expect_contains "report -o: where" "$work/pic.png" "$out"
[ -s "$work/pic.svg" ] || fail "report -o wrote no SVG"
run report 20990101-000000-000-00000000
expect_eq "report of an unknown chain: exit" 2 "$rc"
finish
