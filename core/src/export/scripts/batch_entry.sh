#!/bin/bash
# The entry point of every container of a stage's AWS Batch job (docs/export.md): `entry.sh
# STAGE`, written by `trnslurm export --to aws-batch` into <run dir>/aws-batch/, beside the stage
# scripts (stages/STAGE.sh) and task-env.sh (what the plugin would set on a node, decided when the
# recipe was exported). Compiled into the core and written unchanged; a file of its own, which
# the shellcheck test reads.
#
# Batch starts one container per node and ends the job when the main node's container exits,
# with the main node's status. This file finds the node's place from what Batch tells it (its
# index, the node count, the main node's address); node-steps.sh (node_steps.sh here) runs the
# stage: the main node runs its script, every node its srun steps. A lost node makes the main
# node exit 75, which the job definition's retry strategy retries.
set -eo pipefail
trn_stage=${1:?usage: entry.sh STAGE}
trn_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
trn_script=$trn_here/stages/$trn_stage.sh
if [[ ! $trn_stage =~ ^[A-Za-z0-9_-]+$ || ! -f $trn_script ]]; then
  echo "trnslurm: no stage '$trn_stage' in $trn_here/stages" >&2
  exit 2
fi
# shellcheck source=/dev/null
. "$trn_here/task-env.sh"

# A node of a multi-node parallel job (AWS Batch user guide, "Environment variables" of
# multi-node parallel jobs); a job of one node that is not one has none of them.
export TRN_NODE_INDEX=${AWS_BATCH_JOB_NODE_INDEX:-0}
export TRN_NUM_NODES=${AWS_BATCH_JOB_NUM_NODES:-1}
trn_main_index=${AWS_BATCH_JOB_MAIN_NODE_INDEX:-0}
for trn_v in "$TRN_NODE_INDEX" "$TRN_NUM_NODES" "$trn_main_index"; do
  if [[ ! $trn_v =~ ^[0-9]+$ ]]; then
    echo "trnslurm: AWS_BATCH_JOB_NODE_INDEX, _NUM_NODES and _MAIN_NODE_INDEX must be numbers, not '$trn_v'" >&2
    exit 2
  fi
done
if [ "$TRN_NODE_INDEX" -ge "$TRN_NUM_NODES" ] || [ "$trn_main_index" -ge "$TRN_NUM_NODES" ]; then
  echo "trnslurm: node $TRN_NODE_INDEX (main node $trn_main_index) of a job of $TRN_NUM_NODES nodes" >&2
  exit 2
fi
# Batch gives the main node's address to the child nodes only: the main node takes its own first
# address, which is the one Batch gives the others.
if [ -n "${AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS:-}" ]; then
  TRN_MAIN_ADDR=$AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS
elif [ "$TRN_NODE_INDEX" = "$trn_main_index" ]; then
  read -r TRN_MAIN_ADDR _ < <(hostname -I 2>/dev/null) || true
  TRN_MAIN_ADDR=${TRN_MAIN_ADDR:-127.0.0.1}
else
  echo "trnslurm: child node $TRN_NODE_INDEX has no AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS" >&2
  exit 2
fi
export TRN_MAIN_ADDR
# One directory per job and attempt: a retried job starts its steps afresh. Batch names a node
# of the job <job id>#<node index>.
trn_job=${AWS_BATCH_JOB_ID:-local}
trn_job=${trn_job%%#*}
export TRN_JOB=${trn_job//[^A-Za-z0-9_-]/}-${AWS_BATCH_JOB_ATTEMPT:-1}
echo "trnslurm: stage $trn_stage, node $TRN_NODE_INDEX of $TRN_NUM_NODES, main node $trn_main_index at $TRN_MAIN_ADDR" >&2
# shellcheck source=node_steps.sh
. "$trn_here/node-steps.sh"
trn_start_heartbeat
trap 'kill "$trn_beat" 2>/dev/null || true' EXIT
if [ "$TRN_NODE_INDEX" = "$trn_main_index" ]; then
  trn_rc=0
  trn_main || trn_rc=$?
  exit "$trn_rc"
fi
trn_child
