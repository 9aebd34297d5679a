#!/usr/bin/env bash
# A time limit (1 minute, whole minutes only) shorter than the run: USR1 signal_grace seconds
# before it, the trainer checkpoints, the job requeues itself and resumes, and the chain ends
# with convert_back run once. See docs/resilience.md.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"
source "$(dirname "$0")/resilience_lib.sh"

# 23 steps of 1.5 s: about 40 s of training against a minute whose last 30 s are the grace.
capture "$trn" submit --set stages.train.time=1 --set stages.train.env.STEP_DELAY=1.5
expect_eq "submit exit code" 0 "$rc"
chain=$(chain_of "$out")
run=runs/$chain
expect_contains "train's sbatch asks for the signal" "--signal=B:USR1@30" "$(cat "$run/manifest.json")"

expect_eq "chain verdict (status exit code)" 0 "$(wait_chain "$chain" 240)"
json=$("$trn" status "$chain" --json || true)
requeues=$("$py" -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin)["restarts"] if e["event"]=="requeue" and e["cause"]=="time-limit"))' <<<"$json")
[ "$requeues" -ge 1 ] || fail "no time-limit requeue recorded: $json"
checks=$((checks + 1))
grep -q '"event": "preempted"' "$run/train.jsonl" || fail "the trainer never checkpointed on the signal"
checks=$((checks + 1))
capture "$trn" status "$chain"
expect_contains "status names the cause" "time limit (USR1, checkpoint, requeue)" "$out"
# The trainer checkpointed at the step it stopped at: nothing is trained twice.
expect_eq "steps trained twice" 0 "$(redone_steps "$run/train.jsonl")"
expect_eq "every step trained" "$("$trn" plan --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["total_steps"])')" \
  "$("$py" -c 'import json,sys; print(max(json.loads(l).get("step", 0) for l in open(sys.argv[1])))' "$run/train.jsonl")"
expect_eq "convert_back ran once" 1 "$(grep -c convert_back "$run/order")"
expect_eq "precompile ran once" 1 "$(grep -c precompile "$run/order")"
expect_nodes_idle "the time limit test"
finish
