# shellcheck shell=bash disable=SC2154
# (SC2154: trn_here, trn_stage, trn_script, trn_main_index are the sourcing entry point's.)
# The steps of an exported stage across the nodes of one job (docs/export.md), shared by the
# entry points of every scheduler trnslurm exports to (batch_entry.sh, k8s_entry.sh), which source
# it once they know this node's place: TRN_NODE_INDEX, TRN_NUM_NODES, TRN_MAIN_ADDR (exported),
# trn_main_index, and TRN_JOB, one name per job and attempt. Compiled into the core and written
# beside the entry point unchanged.
#
# The main node runs the stage's script as Slurm's batch step would; its `srun` is the function
# below: the step is announced in the run directory (the shared file system every node mounts),
# every node runs it with its own place, and srun returns once each node has answered. A node
# that stops answering (its heartbeat file goes stale) makes a failed stage exit 75, the status
# each system's retry rule retries; any other failure is the command's own and ends the job.

export TRN_STEPS=$trn_here/steps/$TRN_JOB
mkdir -p "$TRN_STEPS"
trn_heartbeat=${TRNSLURM_BATCH_HEARTBEAT:-10}          # seconds between a node's signs of life
trn_node_timeout=${TRNSLURM_BATCH_NODE_TIMEOUT:-120}   # a node silent this long is lost
trn_start_timeout=${TRNSLURM_BATCH_START_TIMEOUT:-900} # a node that never started is lost

# Touches alive.<index> every trn_heartbeat seconds until killed; its pid in trn_beat.
trn_start_heartbeat() {
  (
    trap 'exit 0' TERM
    while :; do
      touch "$TRN_STEPS/alive.$TRN_NODE_INDEX"
      sleep "$trn_heartbeat"
    done
  ) &
  # shellcheck disable=SC2034 # for the entry point, which ends it
  trn_beat=$!
}

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
        AWS_BATCH_* | ECS_* | K_MPI_* | OMPI_MCA_* | KUBERNETES_* | TRN_POD_UID) continue ;;
        HOSTNAME | MASTER_ADDR | TRNSLURM_NODE_RANK | PWD | OLDPWD | SHLVL | _) continue ;;
        TRN_NODE_INDEX | TRN_NUM_NODES | TRN_MAIN_ADDR | TRN_JOB | TRN_STEPS | TRN_STEP) continue ;;
      esac
      [[ ${kv%%=*} =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && export "${kv?}"
    done <"$TRN_STEPS/$n.env"
    # The job's id, which the stage commands give torchrun as its rendezvous id.
    export SLURM_JOB_ID=$TRN_JOB
    trn_task_env "${cmd[0]}"
    cd "${cmd[1]}" || exit
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
          echo "trnslurm: srun $1 has no equivalent outside Slurm here (known: $TRN_SRUN_OPTIONS)" >&2
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

# The main node: runs the stage's script; its status, 75 when a node was lost (retried), is
# written to `end` and returned.
trn_main() {
  local rc=0
  export -f srun trn_run_step trn_silence trn_task_env
  export trn_start_timeout trn_node_timeout
  bash "$trn_script" || rc=$?
  # A failure while a node was lost is the instance's, not the command's: retried (exit 75).
  if [ "$rc" != 0 ] && [ -s "$TRN_STEPS/lost" ]; then
    echo "trnslurm: stage $trn_stage failed (exit $rc) after node(s) $(paste -sd, "$TRN_STEPS/lost") stopped answering: exit 75 (retried)" >&2
    rc=75
  fi
  echo "$rc" >"$TRN_STEPS/end"
  return "$rc"
}

# A child node: each step the main node announces, in order, until the main node ends the
# stage (0) or stops answering (1).
trn_child() {
  local n=1 s
  while :; do
    if [ -f "$TRN_STEPS/$n.cmd" ]; then
      trn_run_step "$n" || true
      n=$((n + 1))
      continue
    fi
    [ ! -f "$TRN_STEPS/end" ] || return 0
    s=$(trn_silence "$trn_main_index")
    if [ -n "$s" ] && [ "$s" -gt "$trn_node_timeout" ]; then
      echo "trnslurm: the main node $trn_main_index stopped answering" >&2
      return 1
    fi
    sleep 1
  done
}
