#!/bin/bash
# Every stage's record of how its job ended (docs/chain.md, "How a stage ended"): what `status`
# reads once Slurm has forgotten the job and there is no accounting. Compiled into the core
# (core/CMakeLists.txt) and spliced by job_script.cpp into every stage's job script, right after
# its exports: what lies between the two "trnslurm:" marker lines. One file per job and attempt,
# <run dir>/outcomes/<stage>.<job id>.<restart count>.json, written first when the attempt starts
# ("running") and replaced when it ends, always through a temporary file renamed in the same
# directory so that a reader sees a whole record or the one before. Everything in it is numbers
# and fixed words.
# The train wrapper (train_wrapper.sh) sets trn_outcome_cause and trn_outcome_signal, and writes a
# final record itself before it requeues its job (trn_outcome requeued ...), which ends the script
# before any exit path. The job script exports what it reads: TRNSLURM_RUN_DIR, TRNSLURM_STAGE.
# A file of its own so that shellcheck reads it.
# trnslurm: outcome begins

# --- trnslurm outcome record (docs/chain.md): how this attempt of the job ended ---
# A stage that takes USR1 (the train wrapper's checkpoint before the time limit) notes it before
# the first command: bash's default ends the shell, and Slurm may send it as soon as a requeued
# job starts. The wrapper acts on it.
[ -z "${TRNSLURM_SIGNAL_GRACE:-}" ] || trap 'trn_usr1=1' USR1
trn_outcome_cause=
trn_outcome_signal=
trn_outcome_done=
printf -v trn_outcome_start '%(%s)T' -1
trn_outcome_stage=${TRNSLURM_STAGE//[^A-Za-z0-9_-]/}
trn_outcome_host=${SLURMD_NODENAME:-}
trn_outcome_host=${trn_outcome_host//[^A-Za-z0-9._-]/}
trn_outcome_dir=$TRNSLURM_RUN_DIR/outcomes
trn_outcome_file=$trn_outcome_dir/$trn_outcome_stage.${SLURM_JOB_ID:-0}.${SLURM_RESTART_COUNT:-0}.json
trn_outcome() {  # STATE [EXIT]: running, completed, failed, signalled or requeued
  local end=null code=${2:-null} signal=null cause=${trn_outcome_cause//[^a-z-]/}
  [ -n "${SLURM_JOB_ID:-}" ] || return 0 # not a Slurm job: nothing will ask
  [ "$1" = running ] || printf -v end '%(%s)T' -1
  [ -z "$trn_outcome_signal" ] || signal="\"${trn_outcome_signal//[^A-Z0-9]/}\""
  [ -d "$trn_outcome_dir" ] || mkdir -p "$trn_outcome_dir" 2>/dev/null || return 0
  printf '{"stage":"%s","job":%d,"attempt":%d,"state":"%s","exit":%s,"signal":%s,"cause":"%s","start":%d,"end":%s,"host":"%s"}\n' \
    "$trn_outcome_stage" "$SLURM_JOB_ID" "${SLURM_RESTART_COUNT:-0}" "$1" "$code" "$signal" "$cause" \
    "$trn_outcome_start" "$end" "$trn_outcome_host" >"$trn_outcome_file.tmp.$$" 2>/dev/null &&
    mv -f "$trn_outcome_file.tmp.$$" "$trn_outcome_file" 2>/dev/null
  return 0
}
# shellcheck disable=SC2317  # run by the EXIT trap below
trn_outcome_on_exit() {
  local rc=$?
  set +e # a failing command here must not change the job's exit status
  [ -z "$trn_outcome_done" ] || return 0
  trn_outcome_done=1
  if [ -n "$trn_outcome_signal" ]; then
    trn_outcome signalled "$rc"
  elif [ "$rc" = 0 ]; then
    trn_outcome completed 0
  else
    trn_outcome failed "$rc"
  fi
}
trap trn_outcome_on_exit EXIT
# scancel, the time limit or a preemption: Slurm's SIGTERM to the batch shell. The shell runs the
# trap once its foreground command (which got the signal too) has ended.
trap 'trn_outcome_signal=TERM; exit 143' TERM
trap 'trn_outcome_signal=INT; exit 130' INT
trap 'trn_outcome_signal=HUP; exit 129' HUP
trn_outcome running
# trnslurm: outcome ends
