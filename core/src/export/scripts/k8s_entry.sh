#!/bin/bash
# The entry point of every pod of a stage's MPIJob (docs/export.md): `entry.sh STAGE`, written by
# `trnslurm export --to k8s` into <run dir>/k8s/, beside the stage scripts (stages/STAGE.sh),
# task-env.sh (what the plugin would set on a node) and node-steps.sh (the steps across nodes,
# shared with the AWS Batch export). Compiled into the core and written unchanged.
#
# The MPIJob runs the launcher as a worker (runLauncherAsWorker): the launcher pod is node 0 and
# the main node, each worker pod one more node. The operator tells the launcher who they are, in
# the hostfile it mounts there (OMPI_MCA_orte_default_hostfile: one line per pod, the launcher's
# first, each the pod's host name in the job's service domain); the workers get no hostfile. So
# the launcher publishes it, for one attempt, in the run directory (the shared volume every pod
# mounts): steps/<attempt>/hostfile, and jobs/<stage>/current names that attempt. Each pod's place
# is the line of its own host name (the name the operator gave the pod); the main node's address
# is the first line. Nothing here builds a pod or service name.
#
# Retries: the launcher is a batch/v1 Job whose backoffLimit is the stage's retries. A lost node
# makes the launcher exit 75: the Job starts a new launcher pod, a new attempt, and the workers
# that are still there, or that the operator created again, join it. Any other failure is the
# stage's own: it is recorded for the launcher's Job (jobs/<stage>/failed.<the Job's uid>, from
# the label the Job controller gives its pods) and a later launcher of the same Job exits with it
# at once instead of running the stage again; a new MPIJob (a new Job) runs it.
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
trn_jobs=$trn_here/jobs/$trn_stage
mkdir -p "$trn_jobs"
trn_self=$(hostname)
trn_self=${trn_self%%.*}
trn_poll=${TRNSLURM_K8S_POLL:-2}

# trn_place HOSTFILE: this pod's place from the operator's hostfile (its first word per line):
# TRN_NODE_INDEX, TRN_NUM_NODES, TRN_MAIN_ADDR; 1 when this pod is not in it.
trn_place() {
  local -a hosts=()
  local line i
  while read -r line _; do
    [ -z "$line" ] || [[ $line == \#* ]] || hosts+=("$line")
  done <"$1"
  TRN_NUM_NODES=${#hosts[@]}
  [ "$TRN_NUM_NODES" -gt 0 ] || return 1
  TRN_MAIN_ADDR=${hosts[0]}
  for ((i = 0; i < TRN_NUM_NODES; i++)); do
    if [ "${hosts[i]%%.*}" = "$trn_self" ]; then
      TRN_NODE_INDEX=$i
      export TRN_NODE_INDEX TRN_NUM_NODES TRN_MAIN_ADDR
      return 0
    fi
  done
  return 1
}

trn_main_index=0
case ${K_MPI_JOB_ROLE:-} in
launcher)
  trn_failed=$trn_jobs/failed
  [ -z "${TRN_LAUNCHER_JOB_UID:-}" ] || trn_failed+=.${TRN_LAUNCHER_JOB_UID//[^A-Za-z0-9_-]/}
  if [ -f "$trn_failed" ]; then
    read -r trn_rc <"$trn_failed" || trn_rc=1
    echo "trnslurm: stage $trn_stage failed before (exit $trn_rc), not for a lost node: not run again" >&2
    exit "$trn_rc"
  fi
  trn_hostfile=${OMPI_MCA_orte_default_hostfile:-/etc/mpi/hostfile}
  if ! trn_place "$trn_hostfile" || [ "$TRN_NODE_INDEX" != 0 ]; then
    echo "trnslurm: the launcher ($trn_self) is not the first host of $trn_hostfile: the MPIJob must run the launcher as a worker (runLauncherAsWorker)" >&2
    exit 2
  fi
  # One attempt per launcher pod (its uid, given by the downward API).
  export TRN_JOB=${TRN_POD_UID//[^A-Za-z0-9_-]/}
  if [ -z "$TRN_JOB" ]; then
    echo "trnslurm: TRN_POD_UID is not set (the MPIJob gives it from metadata.uid)" >&2
    exit 2
  fi
  echo "trnslurm: stage $trn_stage, attempt $TRN_JOB, node 0 of $TRN_NUM_NODES at $TRN_MAIN_ADDR" >&2
  # shellcheck source=node_steps.sh
  . "$trn_here/node-steps.sh"
  cp "$trn_hostfile" "$TRN_STEPS/hostfile"
  echo "$TRN_JOB" >"$trn_jobs/current.tmp"
  mv -f "$trn_jobs/current.tmp" "$trn_jobs/current"
  trn_start_heartbeat
  trap 'kill "$trn_beat" 2>/dev/null || true' EXIT
  trn_rc=0
  trn_main || trn_rc=$?
  [ "$trn_rc" = 0 ] || [ "$trn_rc" = 75 ] || echo "$trn_rc" >"$trn_failed"
  exit "$trn_rc"
  ;;
worker) ;;
*)
  echo "trnslurm: K_MPI_JOB_ROLE is '${K_MPI_JOB_ROLE:-}', not launcher or worker (the MPI Operator sets it)" >&2
  exit 2
  ;;
esac

# A worker: joins the attempt the launcher names, until the stage ends (0) or fails for good (0:
# the launcher's status is the job's). A main node that stops answering, or a new attempt, ends
# this node's part in the old one. An attempt that has ended (an earlier MPIJob's) is not joined;
# the operator deletes the workers when the launcher has ended (cleanPodPolicy: Running).
trn_done=
while :; do
  trn_job=
  [ ! -f "$trn_jobs/current" ] || read -r trn_job <"$trn_jobs/current" || true
  if [ -z "$trn_job" ] || [ "$trn_job" = "$trn_done" ] || [ ! -f "$trn_here/steps/$trn_job/hostfile" ] ||
    [ -f "$trn_here/steps/$trn_job/end" ]; then
    sleep "$trn_poll"
    continue
  fi
  export TRN_JOB=$trn_job
  if ! trn_place "$trn_here/steps/$TRN_JOB/hostfile"; then
    echo "trnslurm: this pod ($trn_self) is not in attempt $TRN_JOB's hostfile" >&2
    exit 2
  fi
  # shellcheck source=node_steps.sh
  . "$trn_here/node-steps.sh"
  echo "trnslurm: stage $trn_stage, attempt $TRN_JOB, node $TRN_NODE_INDEX of $TRN_NUM_NODES, main node at $TRN_MAIN_ADDR" >&2
  if [ -e "$TRN_STEPS/alive.$TRN_NODE_INDEX" ]; then
    # This node was in the attempt before (its pod or container was lost and started again):
    # the steps it ran are gone; the attempt ends, and the next one starts them afresh.
    echo "trnslurm: node $TRN_NODE_INDEX was in attempt $TRN_JOB before: ending its steps (lost node)" >&2
    echo "$TRN_NODE_INDEX" >>"$TRN_STEPS/lost"
    for trn_cmd in "$TRN_STEPS"/*.cmd; do
      [ ! -f "$trn_cmd" ] || touch "${trn_cmd%.cmd}.abort"
    done
    trn_done=$TRN_JOB
    continue
  fi
  trn_start_heartbeat
  trn_child &
  trn_pid=$!
  while kill -0 "$trn_pid" 2>/dev/null; do
    trn_now=
    read -r trn_now <"$trn_jobs/current" 2>/dev/null || true
    if [ "$trn_now" != "$TRN_JOB" ]; then
      echo "trnslurm: attempt $trn_now replaces $TRN_JOB: ending this node's steps" >&2
      for trn_cmd in "$TRN_STEPS"/*.cmd; do
        [ ! -f "$trn_cmd" ] || touch "${trn_cmd%.cmd}.abort"
      done
    fi
    sleep "$trn_poll"
  done
  wait "$trn_pid" || true
  kill "$trn_beat" 2>/dev/null || true
  wait "$trn_beat" 2>/dev/null || true
  trn_done=$TRN_JOB
  if [ -f "$TRN_STEPS/end" ]; then
    read -r trn_end <"$TRN_STEPS/end" || trn_end=1
    [ "$trn_end" = 75 ] || exit 0
  fi
done
