#!/bin/bash
# The train stage's wrapper (docs/resilience.md): checkpoint on USR1, requeue, resume. Compiled
# into the core (core/CMakeLists.txt) and spliced into the train job script by job_script.cpp:
# what lies between the two "trnslurm:" marker lines, with the recipe's command in place of the
# ":" line. The recipe's command runs in a background subshell so the batch shell can take USR1
# while it runs (bash runs traps only between commands). Everything it writes to
# logs/train-restarts.jsonl is numbers and fixed words. The job script exports what it reads:
# TRNSLURM_RUN_DIR, TRNSLURM_MAX_RESTARTS, TRNSLURM_SIGNAL_GRACE (and TRNSLURM_CHECKPOINT_DIR),
# and with the pre-flight on (docs/health.md) TRNSLURM_PREFLIGHT_BIN and its settings.
# A file of its own so that shellcheck reads it (scripts/test). It sets trn_outcome_cause,
# trn_outcome_signal and trn_outcome_done for the outcome record before it (stage_outcome.sh),
# which the job script runs first: read there, at the script's exit.
# shellcheck disable=SC2034
# trnslurm: wrapper begins

# --- trnslurm resilience (docs/resilience.md): checkpoint on USR1, requeue, resume ---
# First thing: bash's default for USR1 ends the batch shell, and Slurm may send it before the
# handler below exists (again as soon as a requeued job starts). Note it and act on it there (the
# outcome record before this, stage_outcome.sh, already notes it).
trn_usr1=${trn_usr1:-}
trap 'trn_usr1=1' USR1
trn_log="$TRNSLURM_RUN_DIR/logs/train-restarts.jsonl"
trn_pending="$TRNSLURM_RUN_DIR/logs/.train-requeue"
trn_restart=${SLURM_RESTART_COUNT:-0}
trn_newest_step() {  # the layouts of chain_progress.hpp: step_<n>/done (NxD), step-<n>/.metadata (DCP)
  local d n best=-1
  for d in "${TRNSLURM_CHECKPOINT_DIR:-/nonexistent}"/step_*/done "${TRNSLURM_CHECKPOINT_DIR:-/nonexistent}"/step-*/.metadata; do
    [ -e "$d" ] || continue
    n=${d%/*}
    n=${n##*/step[_-]}
    [[ $n =~ ^[0-9]+$ ]] && [ "$((10#$n))" -gt "$best" ] && best=$((10#$n))
  done
  if [ "$best" -ge 0 ]; then echo "$best"; else echo null; fi
}
trn_record() {  # EVENT CAUSE [KEY VALUE]...: one JSON line
  local line
  line=$(printf '{"event":"%s","cause":"%s","restart":%d,"job":%d,"time":%d' "$1" "$2" \
    "$trn_restart" "${SLURM_JOB_ID:-0}" "$(date +%s)")
  shift 2
  while [ $# -ge 2 ]; do
    line+=$(printf ',"%s":%s' "$1" "$2")
    shift 2
  done
  printf '%s}\n' "$line" >>"$trn_log"
}
mkdir -p "$TRNSLURM_RUN_DIR/logs"
# Requeues that excluded a node failing the pre-flight have a cap of their own
# (max_exclusions): they do not count against max_restarts.
trn_excluded=$(grep -c '"event":"exclude"' "$trn_log" 2>/dev/null || true)
trn_used=$((trn_restart - ${trn_excluded:-0}))
if [ "$trn_restart" -gt 0 ]; then
  # Our own requeue left its cause; otherwise Slurm requeued the job (a node failed, or
  # preemption, or `scontrol requeue` by hand).
  trn_cause=slurm-requeue
  if [ -f "$trn_pending" ] && read -r trn_c trn_n <"$trn_pending" && [ "$trn_n" = "$((trn_restart - 1))" ]; then
    trn_cause=$trn_c
  fi
  rm -f "$trn_pending"
  if [ "$trn_used" -gt "$TRNSLURM_MAX_RESTARTS" ]; then
    trn_record gave-up "$trn_cause" max_restarts "$TRNSLURM_MAX_RESTARTS"
    trn_outcome_cause=max-restarts
    echo "trnslurm: train restarted $trn_restart times, more than max_restarts = $TRNSLURM_MAX_RESTARTS: giving up" >&2
    exit 1
  fi
  trn_record restart "$trn_cause" resumed_from "$(trn_newest_step)"
  echo "trnslurm: restart $trn_restart ($trn_cause), resuming from step $(trn_newest_step)" >&2
fi
# The pre-flight on this job's nodes (docs/health.md): `trnslurm preflight` checks every node in
# one step; on a failing node it records the exclusion, adds the node to the job's excluded nodes
# and requeues the job (exit 3), or gives up (exit 1) when max_exclusions is used up.
# The cause is written first: the requeue's SIGTERM may end this shell before it returns.
if [ -n "${TRNSLURM_PREFLIGHT_BIN:-}" ]; then
  echo "preflight $trn_restart" >"$trn_pending"
  trn_pf=0
  "$TRNSLURM_PREFLIGHT_BIN" preflight || trn_pf=$?
  trn_outcome_cause=preflight
  if [ "$trn_pf" = 3 ]; then
    trn_outcome requeued 3
    trn_outcome_done=1
    sleep 300  # the requeue ends this script
    exit 1
  fi
  rm -f "$trn_pending"
  [ "$trn_pf" = 0 ] || exit "$trn_pf"
  trn_outcome_cause=
fi
trn_time_left() {  # seconds to the time limit (squeue %L), or nothing when there is none
  local l d=0 f
  l=$(squeue -h -j "$SLURM_JOB_ID" -o %L 2>/dev/null) || return 0
  case $l in *-*) d=${l%%-*} l=${l#*-} ;; esac
  IFS=: read -r -a f <<<"$l"
  for l in "$d" "${f[@]}"; do [[ $l =~ ^[0-9]+$ ]] || return 0; done
  case ${#f[@]} in
  1) echo $((10#$d * 86400 + 10#${f[0]})) ;;
  2) echo $((10#$d * 86400 + 10#${f[0]} * 60 + 10#${f[1]})) ;;
  3) echo $((10#$d * 86400 + 10#${f[0]} * 3600 + 10#${f[1]} * 60 + 10#${f[2]})) ;;
  esac
}
trn_signalled=
trn_on_usr1() {
  local left
  [ -z "$trn_signalled" ] || return 0
  # Slurm may send the --signal up to a minute early (its event resolution), and sends it again
  # as soon as a requeued job starts: ignore one that is far too early, or that comes in the
  # first seconds of a restart with more than signal_grace left (the timer below sends ours).
  left=$(trn_time_left)
  if [ -n "$left" ] && { [ "$left" -gt $((TRNSLURM_SIGNAL_GRACE + 60)) ] ||
    { [ "$trn_restart" -gt 0 ] && [ "$SECONDS" -lt 10 ] && [ "$left" -gt "$TRNSLURM_SIGNAL_GRACE" ]; }; }; then
    echo "trnslurm: USR1 with ${left}s left (signal_grace is ${TRNSLURM_SIGNAL_GRACE}s): ignored" >&2
    return 0
  fi
  trn_signalled=time-limit
  echo "trnslurm: USR1 (time limit near): asking the training to checkpoint" >&2
  # SIGTERM to every step's processes, not to this shell: torchrun forwards it to its workers
  # and gives them 30 s; the trainer stops at the next step and checkpoints.
  scancel --signal=TERM "$SLURM_JOB_ID" || true
}
trn_on_term() {
  # Slurm's SIGTERM: preemption, a cancel, or the end of our own requeue (which wrote its cause).
  trn_signalled=${trn_signalled:-terminated}
  trn_outcome_signal=TERM
  [ ! -f "$trn_pending" ] || return 0
  trn_outcome_cause=preempted
  # Written before asking sinfo: Slurm kills this shell KillWait seconds after the TERM, and a
  # slow slurmctld can take that long to answer.
  echo "preempted $trn_restart" >"$trn_pending"
  if sinfo -h -N -n "$SLURM_JOB_NODELIST" -o '%t' 2>/dev/null | grep -Eq '\*|down|fail'; then
    echo "node-failure $trn_restart" >"$trn_pending"
    trn_outcome_cause=node-failure
  fi
}
trn_term=
trap 'trn_term=1' TERM
# Our own USR1 at signal_grace before the limit, in case Slurm's does not come (see above).
trn_left=$(trn_time_left)
if [ "$TRNSLURM_SIGNAL_GRACE" -gt 0 ] && [ -n "$trn_left" ] && [ "$trn_left" -gt "$TRNSLURM_SIGNAL_GRACE" ]; then
  (
    sleep $((trn_left - TRNSLURM_SIGNAL_GRACE))
    kill -USR1 $$
  ) &
  trn_timer=$!
fi
# The command's exit status, written by its own subshell: a trapped signal interrupts the `wait`
# in which the command ends (status > 128, not the command's), and bash can then lose the status
# altogether (seen with bash 5.2 in Slurm's batch shell: the job stayed "Running" after its process
# was reaped, and waiting for it again hung). A recipe command that sets its own EXIT trap
# replaces this one; then bash's record counts, when it has one.
trn_status=$TRNSLURM_RUN_DIR/logs/.train-status
rm -f "$trn_status"
(
trap 'echo "$?" >"$trn_status"' EXIT
:  # trnslurm: the command
) &
trn_pid=$!
# The traps only note a signal, which interrupts `wait` (status > 128); it is handled here.
trn_signals() {
  if [ -n "$trn_term" ]; then
    trn_term=
    trn_on_term
  fi
  if [ -n "$trn_usr1" ]; then
    trn_usr1=
    trn_on_usr1
  fi
}
trn_rc=0
while kill -0 "$trn_pid" 2>/dev/null; do
  trn_signals
  trn_rc=0
  wait "$trn_pid" || trn_rc=$?
done
trn_signals
if [ -s "$trn_status" ]; then
  read -r trn_rc <"$trn_status"
elif trn_running=$(jobs -rp) && [[ $'\n'$trn_running$'\n' != *$'\n'$trn_pid$'\n'* ]]; then
  trn_rc=0
  wait "$trn_pid" || trn_rc=$?
fi
[ -z "${trn_timer:-}" ] || kill "$trn_timer" 2>/dev/null || true
[ "$trn_rc" = 0 ] && exit 0
trn_requeue() {  # CAUSE: record it and requeue this job, unless max_restarts is used up
  local step
  step=$(trn_newest_step)
  if [ "$trn_used" -ge "$TRNSLURM_MAX_RESTARTS" ]; then
    trn_record gave-up "$1" max_restarts "$TRNSLURM_MAX_RESTARTS" checkpoint "$step"
    trn_outcome_cause=max-restarts
    echo "trnslurm: $1 after $trn_restart restarts (max_restarts = $TRNSLURM_MAX_RESTARTS): giving up" >&2
    exit 1
  fi
  echo "$1 $trn_restart" >"$trn_pending"
  trn_record requeue "$1" checkpoint "$step"
  # The requeue ends this script before any exit path: its record is written now.
  trn_outcome_cause=$1
  trn_outcome requeued "$trn_rc"
  trn_outcome_done=1
  echo "trnslurm: $1: requeueing job $SLURM_JOB_ID (checkpoint step $step)" >&2
  scontrol requeue "$SLURM_JOB_ID"
  sleep 300  # the requeue ends this script
  exit 1
}
if [ "$trn_signalled" = time-limit ]; then trn_requeue time-limit; fi
[ -n "$trn_signalled" ] && exit "$trn_rc"
# The command failed by itself. Decided once, from Slurm's view of the job: a step of the job
# still running after the command ended (a node never reported its end: it died) or a node not
# responding means a node failure, which Slurm answers with a requeue once it marks the node DOWN
# (that ends this script): wait for it, or requeue ourselves. Otherwise the failure is the
# trainer's own: end the job now, without keeping its nodes idle.
trn_sick_nodes() { sinfo -h -N -n "$SLURM_JOB_NODELIST" -o '%t' 2>/dev/null | grep -Eq '\*|down|fail|unk'; }
trn_live_steps() { squeue -h -s -j "$SLURM_JOB_ID" -o %i 2>/dev/null | grep -E '^[0-9_]+\.[0-9]+$'; }
# srun returns once its tasks have ended, and slurmctld hears of the step's end from the nodes a
# moment later (seconds on a busy machine): a step listed only that long was ending, not lost.
trn_steps_ended() {
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    trn_live_steps >/dev/null || return 0
    sleep 0.5
  done
  return 1
}
if trn_steps_ended && ! trn_sick_nodes; then
  echo "trnslurm: the command failed (exit $trn_rc) with every node of the job responding: not requeued" >&2
  exit "$trn_rc"
fi
trn_timeout=$(scontrol show config | sed -n 's/^SlurmdTimeout *= *\([0-9]*\).*/\1/p')
trn_deadline=$((SECONDS + 3 * ${trn_timeout:-300} + 10))
echo "trnslurm: the command failed (exit $trn_rc) while a step or a node of the job is unaccounted for: waiting for Slurm" >&2
while [ $SECONDS -lt $trn_deadline ]; do
  if trn_sick_nodes; then
    echo "trnslurm: a node of the job stopped responding: waiting for Slurm to requeue" >&2
    echo "node-failure $trn_restart" >"$trn_pending"
    sleep "$((2 * ${trn_timeout:-300} + 10))"
    trn_requeue node-failure
  fi
  # The step ended after all, every node answering: the failure was the trainer's own.
  trn_live_steps >/dev/null || break
  sleep 2
done
exit "$trn_rc"
# trnslurm: wrapper ends
