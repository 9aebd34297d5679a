#!/usr/bin/env bash
# A node hard-killed in the middle of training (its slurmd, slurmstepd and workers: SIGKILL):
# Slurm requeues the train job, it resumes from the newest completed checkpoint once the node is
# back, convert_back runs once, and the final weights equal those of an uninterrupted run
# (fixed seeds, same rank layout: bit for bit). See docs/resilience.md.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"
source "$(dirname "$0")/resilience_lib.sh"

revive() { "$dev_cluster" revive-node n2 >/dev/null 2>&1 || true; }
trap 'cancel_chain; revive' EXIT

capture "$trn" submit
expect_eq "submit exit code" 0 "$rc"
chain=$(chain_of "$out")
run=$(run_of "$out")

# Kill n2 once the first checkpoint (step 4) is complete and training goes on.
wait_checkpoint "$(stage_export "$run" train TRNSLURM_CHECKPOINT_DIR)" 4 120
"$dev_cluster" kill-node n2
train=$(stage_job "$chain" train)

# Slurm marks n2 DOWN (SlurmdTimeout=10: 15-30 s) and requeues the job; bring n2 back then.
deadline=$((SECONDS + 90))
until sinfo -h -n n2 -o %t | grep -q down; do
  [ $SECONDS -lt $deadline ] || fail "n2 not DOWN after 90 s: $(sinfo -h -n n2 -o %t)"
  sleep 1
done
"$dev_cluster" revive-node n2

expect_eq "chain verdict (status exit code)" 0 "$(wait_chain "$chain" 240)"
capture "$trn" status "$chain"
expect_contains "status shows the restart" "train restart 1 (job $train" "$out"
expect_contains "status shows the step resumed from" "resumed from step" "$out"
restarts=$("$py" -c 'import json,sys; r=[e for e in json.load(sys.stdin)["restarts"] if e["event"]=="restart"]; print(len(r), r[0]["cause"], r[0]["resumed_from"])' <<<"$("$trn" status "$chain" --json || true)")
read -r count cause resumed <<<"$restarts"
expect_eq "restarts recorded" 1 "$count"
case $cause in node-failure | slurm-requeue) checks=$((checks + 1)) ;; *) fail "restart cause: $cause" ;; esac
[ "$resumed" -ge 4 ] || fail "resumed from step $resumed, before the checkpoint of step 4"
checks=$((checks + 1))
redone=$(redone_steps "$run/train.jsonl")
[ "$redone" -le 4 ] || fail "$redone steps trained twice, more than checkpoint.every = 4"
checks=$((checks + 1))
expect_eq "runs of convert, train, convert_back (train twice, the others once)" "1 2 1" \
  "$(stage_runs "$run" convert) $(stage_runs "$run" train) $(stage_runs "$run" convert_back)"
# A warm compile cache may let the chain skip its precompile: at most once, never again.
[ "$(stage_runs "$run" precompile)" -le 1 ] || fail "precompile ran $(stage_runs "$run" precompile) times"
checks=$((checks + 1))
expect_eq "final weights against an uninterrupted run" equal "$(compare_with_uninterrupted "$run")"
expect_nodes_idle "the node failure test"
finish
