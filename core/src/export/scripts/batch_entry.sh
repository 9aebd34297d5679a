#!/bin/bash
# The entry point of every container of a stage's AWS Batch job (docs/export.md): `entry.sh
# STAGE`, written by `trnslurm export --to aws-batch` into <run dir>/aws-batch/, beside the stage
# scripts (stages/STAGE.sh) and task-env.sh (what the plugin would set on a node, decided when the
# recipe was exported). Compiled into the core and written unchanged; a file of its own, which
# the shellcheck test reads.
#
# Batch starts one container per node and ends the job when the main node's container exits,
# with the main node's status. The main node runs the stage's script as Slurm's batch step would;
# its `srun` is the function below: the step is announced in the run directory (the shared file
# system every node mounts), every node runs it with what Batch tells that node (its index, the
# node count, the main node's address), and srun returns once each node has answered. A node that
# stops answering (its heartbeat file goes stale) makes a failed stage exit 75, which the job
# definition's retry strategy retries; any other failure is the command's own and ends the job.
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
export TRN_STEPS=$trn_here/steps/$TRN_JOB
mkdir -p "$TRN_STEPS"
trn_heartbeat=${TRNSLURM_BATCH_HEARTBEAT:-10}        # seconds between a node's signs of life
trn_node_timeout=${TRNSLURM_BATCH_NODE_TIMEOUT:-120} # a node silent this long is lost
trn_start_timeout=${TRNSLURM_BATCH_START_TIMEOUT:-900} # a child node that never started is lost
echo "trnslurm: stage $trn_stage, node $TRN_NODE_INDEX of $TRN_NUM_NODES, main node $trn_main_index at $TRN_MAIN_ADDR" >&2

(
  trap 'exit 0' TERM
  while :; do
    touch "$TRN_STEPS/alive.$TRN_NODE_INDEX"
    sleep "$trn_heartbeat"
  done
) &
trn_beat=$!
trap 'kill "$trn_beat" 2>/dev/null || true' EXIT

# Seconds since node I last showed life; empty when it never did.
trn_silence() {
  local f=$TRN_STEPS/alive.$1 t
  t=$(stat -c %Y "$f" 2>/dev/null) || return 0
  echo $(($(date +%s) - t))
}

# Step N here: the main node's environment as srun passes it (less what each node has of its
# own), then what the plugin sets for the step's launch, then the command, in a process group of
# its own, ended when the main node aborts the step (N.abort). Its status goes to N.<index>.rc.
trn_run_step() {
  local n=$1 kv rc=0 pid aborted=
  local -a cmd
  mapfile -d '' cmd <"$TRN_STEPS/$n.cmd"
  set -m
  (
    while IFS= read -r -d '' kv; do
      case ${kv%%=*} in
        AWS_BATCH_* | ECS_* | HOSTNAME | MASTER_ADDR | TRNSLURM_NODE_RANK | PWD | OLDPWD | SHLVL | _) continue ;;
        TRN_NODE_INDEX | TRN_NUM_NODES | TRN_MAIN_ADDR | TRN_JOB | TRN_STEPS | TRN_STEP) continue ;;
      esac
      [[ ${kv%%=*} =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && export "${kv?}"
    done <"$TRN_STEPS/$n.env"
    # The job's id, which the stage commands give torchrun as its rendezvous id.
    export SLURM_JOB_ID=$TRN_JOB
    trn_task_env "${cmd[0]}"
    cd "${cmd[1]}"
    exec "${cmd[@]:2}"
  ) &
  pid=$!
  set +m
  while kill -0 "$pid" 2>/dev/null; do
    if [ -z "$aborted" ] && [ -f "$TRN_STEPS/$n.abort" ]; then
      aborted=1
      kill -TERM -- "-$pid" 2>/dev/null || true
    fi
    sleep 1
  done
  wait "$pid" || rc=$?
  echo "$rc" >"$TRN_STEPS/$n.$TRN_NODE_INDEX.rc.tmp"
  mv -f "$TRN_STEPS/$n.$TRN_NODE_INDEX.rc.tmp" "$TRN_STEPS/$n.$TRN_NODE_INDEX.rc"
  return "$rc"
}

# The main node's srun: one task per node (the options every stage's srun gives; others are
# refused when the recipe is exported), on every node of the job. As srun --kill-on-bad-exit,
# the first node to fail, or to stop answering, ends the step on every node.
srun() {
  local launch=default n i rc=0 status silent started local_pid lost=0 open
  while [ $# -gt 0 ]; do
    case $1 in
      --) shift; break ;;
      -*)
        if [[ " $TRN_SRUN_OPTIONS " != *" $1 "* ]]; then
          echo "trnslurm: srun $1 has no AWS Batch equivalent here (known: $TRN_SRUN_OPTIONS)" >&2
          return 2
        fi
        [ "$1" != --trn-launch=torchrun ] || launch=torchrun
        shift ;;
      *) break ;;
    esac
  done
  if [ $# -eq 0 ]; then
    echo "trnslurm: srun without a command" >&2
    return 2
  fi
  TRN_STEP=$((${TRN_STEP:-0} + 1))
  n=$TRN_STEP
  env -0 >"$TRN_STEPS/$n.env"
  printf '%s\0' "$launch" "$PWD" "$@" >"$TRN_STEPS/$n.cmd.tmp"
  mv -f "$TRN_STEPS/$n.cmd.tmp" "$TRN_STEPS/$n.cmd"
  started=$(date +%s)
  trn_run_step "$n" &
  local_pid=$!
  while :; do
    open=0
    for ((i = 0; i < TRN_NUM_NODES; i++)); do
      if [ -f "$TRN_STEPS/$n.$i.rc" ]; then
        read -r status <"$TRN_STEPS/$n.$i.rc" || status=1
        if [ "$status" != 0 ] && [ "$rc" = 0 ]; then
          rc=$status
          touch "$TRN_STEPS/$n.abort"
        fi
        continue
      fi
      if [ "$i" != "$TRN_NODE_INDEX" ] && ! grep -qx "$i" "$TRN_STEPS/lost" 2>/dev/null; then
        silent=$(trn_silence "$i")
        if { [ -z "$silent" ] && [ $(($(date +%s) - started)) -gt "$trn_start_timeout" ]; } ||
          { [ -n "$silent" ] && [ "$silent" -gt "$trn_node_timeout" ]; }; then
          echo "trnslurm: node $i stopped answering (step $n): ending the step" >&2
          echo "$i" >>"$TRN_STEPS/lost"
          lost=1
          touch "$TRN_STEPS/$n.abort"
          continue
        fi
      fi
      [ "$i" != "$TRN_NODE_INDEX" ] && grep -qx "$i" "$TRN_STEPS/lost" 2>/dev/null || open=1
    done
    [ "$open" = 1 ] || break
    sleep 1
  done
  wait "$local_pid" || true
  if [ "$rc" = 0 ] && [ "$lost" = 1 ]; then rc=75; fi
  return "$rc"
}

if [ "$TRN_NODE_INDEX" = "$trn_main_index" ]; then
  export -f srun trn_run_step trn_silence trn_task_env
  export trn_start_timeout trn_node_timeout
  trn_rc=0
  bash "$trn_script" || trn_rc=$?
  # A failure while a node was lost is the instance's, not the command's: retried (exit 75).
  if [ "$trn_rc" != 0 ] && [ -s "$TRN_STEPS/lost" ]; then
    echo "trnslurm: stage $trn_stage failed (exit $trn_rc) after node(s) $(paste -sd, "$TRN_STEPS/lost") stopped answering: exit 75 (retried)" >&2
    trn_rc=75
  fi
  echo "$trn_rc" >"$TRN_STEPS/end"
  exit "$trn_rc"
fi

# A child node: each step the main node announces, in order, until the main node ends the stage.
trn_n=1
while :; do
  if [ -f "$TRN_STEPS/$trn_n.cmd" ]; then
    trn_run_step "$trn_n" || true
    trn_n=$((trn_n + 1))
    continue
  fi
  [ ! -f "$TRN_STEPS/end" ] || exit 0
  trn_s=$(trn_silence "$trn_main_index")
  if [ -n "$trn_s" ] && [ "$trn_s" -gt "$trn_node_timeout" ]; then
    echo "trnslurm: the main node $trn_main_index stopped answering" >&2
    exit 1
  fi
  sleep 1
done
