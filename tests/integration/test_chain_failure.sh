# What goes wrong, on the real cluster: a failing middle stage, sbatch failing at each stage k
# (rollback), Ctrl-C and kill -9 during submission, a rollback that cannot cancel, cancel in the
# middle of a run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"

# A failing middle stage: status names it and its log, exits 1, and no job of the chain is left.
capture "$trn" submit --samples 1000 --set 'stages.precompile.command=echo compiling; exit 3'
expect_eq "submit exit code" 0 "$rc"
c=$(chain_of "$out")
expect_eq "failed chain outcome" 1 "$(wait_chain "$c")"
capture "$trn" status "$c"
expect_eq "status exit code of a failed chain" 1 "$rc"
expect_contains "status names the failed stage" "failed: precompile failed" "$out"
expect_contains "status names its log" "runs/$c/logs/precompile-" "$out"
expect_contains "exit code of the failed stage" "FAILED" "$(grep ' precompile ' <<<"$out")"
expect_contains "dependent stage" "blocked: precompile failed" "$(grep ' train ' <<<"$out")"
expect_contains "grandchild stage" "blocked: precompile failed" "$(grep ' convert_back ' <<<"$out")"
expect_eq "no job of the failed chain left" "" "$(active_jobs "$c")"
expect_eq "only convert ran" "convert" "$(cat "runs/$c/order")"
capture "$trn" logs "$c"
expect_contains "logs defaults to the failed stage" "compiling" "$out"

# No sbatch at all (a PATH without Slurm's commands): nothing is submitted, the message says
# which command is missing and where it was looked for, and the chain is recorded as rolled back.
mkdir -p "$work/no-slurm"
ln -sf "$(command -v setpriv)" "$work/no-slurm/setpriv"  # the test user's wrapper needs it
capture env PATH="$work/no-slurm" "$trn" submit --samples 1000
expect_eq "exit code without sbatch" 1 "$rc"
expect_contains "missing sbatch named" "sbatch of stage convert (1 of 4): 'sbatch' not found in PATH" "$out"
expect_contains "nothing submitted without sbatch" "no job had been submitted" "$out"
x=$(chain_of "$(grep 'not submitted' <<<"$out")")
expect_contains "recorded state without sbatch" "rolled-back" "$("$trn" list | grep "$x")"

# sbatch failing at stage k (a partition that does not exist, for that stage only): every job
# already submitted is cancelled, sbatch's own message is shown, the exit code is 1.
k=0
for stage in convert precompile train convert_back; do
  k=$((k + 1))
  capture "$trn" submit --samples 1000 "--stage-arg=$stage=--partition=nope"
  expect_eq "exit code when sbatch fails at stage $k" 1 "$rc"
  expect_contains "sbatch's message at stage $k" "sbatch: error: invalid partition specified: nope" "$out"
  expect_contains "failing stage named at stage $k" "sbatch of stage $stage ($k of 4)" "$out"
  x=$(chain_of "$(grep 'not submitted' <<<"$out")")
  expect_eq "chain id reported at stage $k" yes "$([ -n "$x" ] && echo yes || echo no)"
  expect_eq "no job left when sbatch fails at stage $k" "" "$(active_jobs "$x")"
  expect_eq "jobs submitted then cancelled at stage $k" "$((k - 1))" \
    "$(chain_jobs "$x" | grep -c ' CANCELLED$' || true)"
  expect_contains "recorded state at stage $k" "rolled-back" "$("$trn" list | grep "$x")"
done

# An interrupted submit leaves nothing behind. A wrapper in front of the real sbatch lets
# sbatch create the train job, then says so ($work/created) and holds its answer back for 2 s:
# the moment when the job exists but its id has not reached the journal.
mkdir -p "$work/wrap" "$work/noscancel"
real_sbatch=$(command -v sbatch)
cat >"$work/wrap/sbatch" <<WRAP
#!/bin/sh
out=\$("$real_sbatch" "\$@") || exit \$?
case "\$*" in *-train\ *) touch "$work/created"; sleep 2 ;; esac
printf '%s\n' "\$out"
WRAP
chmod +x "$work/wrap/sbatch"
# Starts submit through the wrapper in a process group of its own (as a shell runs a foreground
# command) and returns once the train job exists; $pid is submit's pid and process group.
submit_until_created() {
  rm -f "$work/created"
  # convert runs long enough for the rest of the chain to stay queued, whatever the timing.
  setsid env PATH="$work/wrap:$PATH" "$trn" submit --samples 1000 --set 'stages.convert.command=sleep 60' \
    >"$work/int.out" 2>&1 &
  pid=$!
  local deadline=$((SECONDS + 30))
  until [ -e "$work/created" ]; do
    [ $SECONDS -lt $deadline ] || fail "the train job was never created: $(cat "$work/int.out")"
    sleep 0.1
  done
}
newest_chain() { find runs -mindepth 1 -maxdepth 1 -newer "$work/wrap/sbatch" -printf '%f\n' | sort | tail -n 1; }

# Ctrl-C as a terminal sends it: SIGINT to the whole foreground process group. sbatch runs in a
# group of its own, so it finishes; its id is recorded and every job is cancelled.
submit_until_created
kill -INT -- -"$pid"
set +e
wait "$pid"
rc=$?
set -e
out=$(cat "$work/int.out")
expect_eq "exit code after Ctrl-C" 1 "$rc"
expect_contains "Ctrl-C message" "interrupted" "$out"
x=$(chain_of "$(grep 'not submitted' <<<"$out")")
expect_eq "no job left after Ctrl-C" "" "$(active_jobs "$x")"
expect_contains "Ctrl-C: the train job in flight was cancelled" "-train CANCELLED" "$(chain_jobs "$x")"
expect_contains "Ctrl-C: the train id in flight was recorded" "job train" "$(cat "runs/$x/journal")"
expect_contains "Ctrl-C: recorded state" "rolled-back" "$("$trn" list | grep "$x")"

# kill -9 while sbatch holds the train id: the train job is nowhere on disk. The next status
# finds it by name and comment and cancels the whole chain; so does cancel.
for cleaner in status cancel; do
  touch "$work/wrap/sbatch"
  submit_until_created
  kill -KILL -- -"$pid"
  wait "$pid" || true
  x=$(newest_chain)
  expect_eq "$cleaner: the train job is queued" 1 "$(squeue -h -t pending -n "trn-$x-train" -o %i | wc -l)"
  checks=$((checks + 1))
  ! grep -q '^job train' "runs/$x/journal" || fail "$cleaner: the train id reached the journal"
  capture "$trn" "$cleaner" "$x"
  if [ "$cleaner" = status ]; then
    expect_eq "status of an abandoned submit" 1 "$rc"
    expect_contains "status says what it cancelled" "the submit of this chain was interrupted: cancelled" "$out"
    expect_contains "status records the rollback" "rolled-back" "$("$trn" list | grep "$x")"
  else
    expect_eq "cancel of an abandoned submit" 0 "$rc"
  fi
  expect_eq "$cleaner: no job of the abandoned submit left" "" "$(active_jobs "$x")"
  expect_contains "$cleaner: the train id found is recorded" "job train" "$(cat "runs/$x/journal")"
done

# A rollback whose scancel fails (a wrapper that always fails, like a controller that does not
# answer) is tried again, then reported as failed, not rolled back; the next status cancels.
printf '#!/bin/sh\necho "scancel: error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' \
  >"$work/noscancel/scancel"
chmod +x "$work/noscancel/scancel"
capture env PATH="$work/noscancel:$PATH" "$trn" submit --samples 1000 --stage-arg=train=--partition=nope \
  --set "stages.convert.command=sleep 60"
expect_eq "exit code when the rollback fails" 1 "$rc"
expect_contains "the failed rollback is reported" "rollback failed: jobs" "$out"
x=$(chain_of "$(grep 'not submitted' <<<"$out")")
expect_contains "recorded state after a failed rollback" "rollback-failed" "$("$trn" list | grep "$x")"
expect_eq "two jobs still queued after the failed rollback" 2 "$(active_jobs "$x" | wc -l)"
capture "$trn" status "$x"
expect_contains "status cancels what the rollback left" "cancelled 2 job(s)" "$out"
expect_eq "no job left after status" "" "$(active_jobs "$x")"
expect_contains "recorded state after status" "rolled-back" "$("$trn" list | grep "$x")"

# cancel in the middle of a run: nothing of the chain is left in the queue.
capture "$trn" submit --samples 1000 --set 'stages.train.command=sleep 60'
c=$(chain_of "$out")
deadline=$((SECONDS + 30))
until chain_jobs "$c" | grep -q -- '-train RUNNING$'; do
  [ $SECONDS -lt $deadline ] || fail "train never started: $(chain_jobs "$c")"
  sleep 0.2
done
capture "$trn" cancel "$c"
expect_eq "cancel exit code" 0 "$rc"
expect_contains "cancel confirms" "no job of it remains" "$out"
expect_contains "recorded state after cancel" "cancelled" "$("$trn" list | grep "$c")"
expect_eq "nothing left after cancel" "" "$(active_jobs "$c")"
capture "$trn" status "$c"
expect_eq "status of a cancelled chain" 1 "$rc"

# The train wrapper (docs/resilience.md). Spies in front of sinfo, squeue and mkdir, on the jobs'
# PATH (sbatch passes the environment on), log each call with the job's id; mkdir can also send
# the batch shell USR1, as Slurm may before the wrapper's handler is in place.
spy=$work/spy
mkdir -p "$spy"
for cmd in sinfo squeue mkdir; do
  # shellcheck disable=SC2016  # expanded by the spy, not here
  printf '#!/bin/sh\necho "%s ${SLURM_JOB_ID:-}" >>"%s"\n' "$cmd" "$work/spy.log" >"$spy/$cmd"
  # shellcheck disable=SC2016
  [ "$cmd" != mkdir ] || printf '[ -z "${TRN_SPY_USR1:-}" ] || kill -USR1 "$PPID"\n' >>"$spy/$cmd"
  printf 'exec %s "$@"\n' "$(command -v "$cmd")" >>"$spy/$cmd"
  chmod +x "$spy/$cmd"
done
spied_calls() { grep -c "^$1 $2\$" "$work/spy.log" || true; }  # COMMAND JOB

# A failure that is the trainer's own (its srun step exits 3 on both nodes, which keep
# responding) ends the job at once: one look at the nodes, no polling for a node failure.
capture env PATH="$spy:$PATH" "$trn" submit --samples 1000 --set 'stages.train.command=srun -N 2 bash -c "exit 3"'
c=$(chain_of "$out")
expect_eq "trainer's own failure: chain outcome" 1 "$(wait_chain "$c")"
train=$(chain_jobs "$c" | awk '$2 ~ /-train$/ {print $1}')
expect_contains "trainer's own failure: train's state" "FAILED 3:0" "$(scontrol show job "$train" | tr ' ' '\n' | grep -E '^(JobState|ExitCode)=' | cut -d= -f2 | tr '\n' ' ')"
expect_contains "trainer's own failure: why it was not requeued" "every node of the job responding: not requeued" \
  "$(cat "runs/$c"/logs/train-*.out)"
[ "$(spied_calls sinfo "$train")" -le 1 ] || fail "the wrapper asked sinfo $(spied_calls sinfo "$train") times after the trainer failed"
checks=$((checks + 1))

# USR1 before the wrapper's handler exists does not kill the batch shell: handled once the
# handler is in place (2 minutes left, signal_grace 30: ignored as too early), the chain completes.
capture env PATH="$spy:$PATH" TRN_SPY_USR1=1 "$trn" submit --samples 1000
c=$(chain_of "$out")
expect_eq "USR1 before the trap: chain outcome" 0 "$(wait_chain "$c")"
train=$(chain_jobs "$c" | awk '$2 ~ /-train$/ {print $1}')
expect_eq "USR1 before the trap: mkdir sent it" 1 "$(spied_calls mkdir "$train")"
expect_contains "USR1 before the trap: handled" "USR1 with" "$(cat "runs/$c"/logs/train-*.out)"

# The command's status survives a USR1 handled while it exits: the command signals the batch
# shell ($$ in its subshell) and exits 0 at once; the job completes.
capture "$trn" submit --samples 1000 --set 'stages.train.command=kill -USR1 $$; exit 0'
c=$(chain_of "$out")
expect_eq "USR1 while the command exits: chain outcome" 0 "$(wait_chain "$c")"
expect_contains "USR1 while the command exits: handled" "USR1 with" "$(cat "runs/$c"/logs/train-*.out)"

expect_nodes_idle "chain failures"
finish
