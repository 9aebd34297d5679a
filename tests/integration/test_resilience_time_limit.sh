#!/usr/bin/env bash
# A time limit (1 minute, whole minutes only) shorter than the run: USR1 signal_grace seconds
# before it, the trainer checkpoints, the job requeues itself and resumes, and the chain ends
# with convert_back run once. See docs/resilience.md.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"
source "$(dirname "$0")/resilience_lib.sh"

# 23 steps of 2 s: 46 s of training against a minute whose last 10 s are the grace, so even a
# trainer that starts at once is interrupted; a loaded machine's slow starts (20-30 s of torch
# imports and rendezvous) get more restarts than the recipe's 3.
capture "$trn" submit --set stages.train.time=1 --set stages.train.signal_grace=10 --set stages.train.max_restarts=8 \
  --set stages.train.env.TRNSLURM_STANDIN_STEP_DELAY=2
expect_eq "submit exit code" 0 "$rc"
chain=$(chain_of "$out")
run=$(run_of "$out")
expect_contains "train's sbatch asks for the signal" "--signal=B:USR1@10" "$(cat "$run/manifest.json")"

expect_eq "chain verdict (status exit code)" 0 "$(wait_chain "$chain" 240)"
json=$("$trn" status "$chain" --json || true)
requeues=$("$py" -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin)["restarts"] if e["event"]=="requeue" and e["cause"]=="time-limit"))' <<<"$json")
[ "$requeues" -ge 1 ] || fail "no time-limit requeue recorded: $json"
checks=$((checks + 1))
grep -q '"event": "preempted"' "$run/train.jsonl" || fail "the trainer never checkpointed on the signal"
checks=$((checks + 1))
capture "$trn" status "$chain"
expect_contains "status names the cause" "time limit (USR1, checkpoint, requeue)" "$out"
# The trainer checkpointed at the step it stopped at: a run after a preempted one resumes from
# exactly that step. (A run whose trainer had just finished when USR1 came is requeued too, since
# torchrun exits non-zero on SIGTERM however its workers ended: that one is not checked.)
resumes=$("$py" - "$run/train.jsonl" <<'PY'
import json, sys
checked, last = [], None
for e in map(json.loads, open(sys.argv[1])):
    if e["event"] == "start" and last and last["event"] == "preempted":
        checked.append(f"{last['step']}->{e.get('resumed_from')}")
    if e["event"] in ("preempted", "end") and not (e["event"] == "end" and e.get("preempted")):
        last = e
print(" ".join(checked))
PY
)
[ -n "$resumes" ] || fail "no run was preempted and resumed: $(grep -v '"step"' "$run/train.jsonl")"
for pair in $resumes; do
  expect_eq "resumed from the step the preempted run stopped at" "${pair%->*}" "${pair#*->}"
done
expect_eq "every step trained" "$("$trn" plan --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["total_steps"])')" \
  "$("$py" -c 'import json,sys; print(max(json.loads(l).get("step", 0) for l in open(sys.argv[1])))' "$run/train.jsonl")"
expect_eq "convert_back ran once" 1 "$(stage_runs "$run" convert_back)"
[ "$(stage_runs "$run" precompile)" -le 1 ] || fail "precompile ran $(stage_runs "$run" precompile) times"
checks=$((checks + 1))
expect_nodes_idle "the time limit test"
finish
