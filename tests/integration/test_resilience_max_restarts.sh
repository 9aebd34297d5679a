#!/usr/bin/env bash
# Past max_restarts the chain fails cleanly: the train job exits 1 on the restart that exceeds
# it, convert_back is cancelled, nothing is left in the queue, and status says why.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"
source "$(dirname "$0")/resilience_lib.sh"

capture "$trn" submit --set stages.train.max_restarts=0 --set stages.train.env.TRNSLURM_STANDIN_STEP_DELAY=1
expect_eq "submit exit code" 0 "$rc"
chain=$(chain_of "$out")
run=$(run_of "$out")
train=$(stage_job "$chain" train)
wait_checkpoint "$(stage_export "$run" train TRNSLURM_CHECKPOINT_DIR)" 4 120
# Requeued by hand (as a preemption would): one restart more than max_restarts = 0 allows.
scontrol requeue "$train"

expect_eq "chain verdict (status exit code)" 1 "$(wait_chain "$chain" 120)"
capture "$trn" status "$chain"
expect_contains "status says why" "train gave up after 1 restarts (max_restarts = 0)" "$out"
# The wrapper records the cause it saw first: "preempted" when its TERM trap ran before Slurm
# killed the step, "slurm-requeue" when the restarted job found the earlier attempt unrecorded.
# Both are a correct reading of a requeue by hand, and both name it.
expect_contains "status names the cause" "scontrol requeue" "$out"
expect_eq "jobs left in the queue" "" "$(active_jobs "$chain")"
expect_contains "convert_back cancelled" "convert_back CANCELLED" "$(chain_jobs "$chain" | awk '{print $2, $3}' | sed "s/trn-$chain-//")"
expect_eq "convert_back never ran" 0 "$(stage_runs "$run" convert_back)"
expect_nodes_idle "the max_restarts test"
finish
