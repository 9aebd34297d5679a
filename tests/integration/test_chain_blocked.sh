# How `status` judges a chain from what Slurm shows, on a cluster of its own (ports BASE+200...,
# brought down even when the test fails) set up to show it: no kill_invalid_depend, no
# accounting, a short MinJobAge, and a Prolog that fails the train job on demand.
# - Blocked: with the per-job --kill-on-invalid-dep=yes turned off, after a failed stage its
#   child pends with Reason=DependencyNeverSatisfied and its grandchild with Reason=Dependency.
#   `status` shows both "blocked: <stage> failed", cancels them, and nothing stays queued.
# - Forgotten: a stage Slurm has forgotten (MinJobAge) is not a failed one. It completed if the
#   next stage pends for a reason other than its dependency; with nothing after it `status` says
#   "unknown" (exit 3); either way nothing is cancelled.
# - Held: a batch job whose launch fails (here its Prolog) is requeued held by Slurm ("launch
#   failed requeued held"); `status` says held and why (exit 4) and `watch` ends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"

export TRNSLURM_CLUSTER_DIR=$work/cluster TRNSLURM_PORT_BASE=$((TRNSLURM_PORT_BASE + 200))
chmod 711 "$work"  # slurmctld runs as SlurmUser, not root: it must reach its directory in $work
export TRNSLURM_DEPENDENCY_PARAMETERS="" TRNSLURM_MIN_JOB_AGE=15 TRNSLURM_PROLOG=$work/prolog
# The Prolog fails the train stage of the chain named in $work/fail-train, if any.
cat >"$TRNSLURM_PROLOG" <<PROLOG
#!/bin/sh
[ -s "$work/fail-train" ] && [ "\$SLURM_JOB_COMMENT" = "trnslurm:\$(cat "$work/fail-train"):train" ] && exit 1
exit 0
PROLOG
chmod +x "$TRNSLURM_PROLOG"
trap '"$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" down >/dev/null 2>&1 || true' EXIT
"$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" up >/dev/null
eval "$("$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" env)"
checks=$((checks + 1))
! grep -q '^DependencyParameters' "$TRNSLURM_CLUSTER_DIR/etc/slurm.conf" || fail "kill_invalid_depend still set"

# The id of stage $2 of chain $1, as submit recorded it.
job_of() { awk -v s="$2" '$1 == "job" && $2 == s { print $3 }' "runs/$1/journal"; }

# --- Blocked -------------------------------------------------------------------------------
capture "$trn" submit --samples 1000 --set 'stages.convert.command=exit 4' --sbatch-arg=--kill-on-invalid-dep=no
expect_eq "submit exit code" 0 "$rc"
c=$(chain_of "$out")
# Wait until Slurm has given up on the child: DependencyNeverSatisfied.
deadline=$((SECONDS + 30))
until squeue -h -n "trn-$c-precompile" -o %r | grep -q DependencyNeverSatisfied; do
  [ $SECONDS -lt $deadline ] || fail "precompile never became DependencyNeverSatisfied: $(chain_jobs "$c")"
  sleep 0.2
done
expect_eq "grandchildren still pending before status" 2 \
  "$(squeue -h -t pending -n "trn-$c-train,trn-$c-convert_back" -o %i | wc -l)"
expect_contains "train waits on its parent only" "Dependency" "$(squeue -h -n "trn-$c-train" -o %r)"

capture "$trn" status "$c"
expect_eq "status exit code" 1 "$rc"
expect_contains "status names the failed stage" "failed: convert failed" "$out"
for s in precompile train convert_back; do
  expect_contains "$s blocked" "blocked: convert failed" "$(grep " $s " <<<"$out")"
done
expect_contains "exit code of convert" " 4" "$(grep ' convert ' <<<"$out")"
# status cancelled them: nothing of the chain is left pending forever.
deadline=$((SECONDS + 15))
while [ -n "$(active_jobs "$c")" ]; do
  [ $SECONDS -lt $deadline ] || fail "blocked stages still queued after status: $(chain_jobs "$c")"
  sleep 0.2
done
expect_eq "no job left" "" "$(active_jobs "$c")"
expect_eq "blocked stages cancelled" 3 "$(chain_jobs "$c" | grep -c ' CANCELLED$' || true)"

# --- Forgotten -----------------------------------------------------------------------------
# Chain a: precompile may only start in 10 minutes (as if it waited that long for nodes).
# Chain b: convert alone. Each convert completes and, MinJobAge later, Slurm forgets it before
# anyone ran status.
capture "$trn" submit --samples 1000 --stage-arg=precompile=--begin=now+600
expect_eq "submit of chain a" 0 "$rc"
a=$(chain_of "$out")
capture "$trn" submit --samples 1000 --only convert
expect_eq "submit of chain b" 0 "$rc"
b=$(chain_of "$out")
for x in "$a" "$b"; do
  id=$(job_of "$x" convert)
  deadline=$((SECONDS + 90))
  while squeue -h -j "$id" -o %i >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "Slurm still knows convert ($id) after 90 s: $(chain_jobs "$x")"
    sleep 1
  done
done
expect_eq "precompile of a waits for its begin time" "PENDING BeginTime" "$(squeue -h -n "trn-$a-precompile" -o '%T %r')"
capture "$trn" status "$a"
expect_eq "status of a: still running, exit 3" 3 "$rc"
expect_contains "a: convert completed, since precompile became eligible" \
  "forgotten by Slurm; completed: precompile became eligible after it" "$(grep ' convert ' <<<"$out")"
expect_eq "status of a cancelled nothing" 3 "$(active_jobs "$a" | wc -l)"
capture "$trn" status "$b"
expect_eq "status of b: unknown, exit 3" 3 "$rc"
expect_contains "b: the verdict says unknown" "unknown: how convert ended is not known" "$out"
capture "$trn" status "$b" --json
expect_contains "b: --json verdict unknown" '"verdict": "unknown"' "$out"
# a goes on and succeeds.
scontrol update "jobid=$(job_of "$a" precompile)" StartTime=now
expect_eq "chain a completes" 0 "$(wait_chain "$a" 90)"
expect_eq "a: stages ran" "convert precompile train convert_back" "$(tr '\n' ' ' <"runs/$a/order" | sed 's/ $//')"

# --- Held ----------------------------------------------------------------------------------
capture "$trn" submit --samples 1000 --set 'stages.precompile.command=sleep 2'
expect_eq "submit for the held train" 0 "$rc"
c=$(chain_of "$out")
echo "$c" >"$work/fail-train"
train=$(job_of "$c" train)
deadline=$((SECONDS + 60))
until squeue -h -j "$train" -o %r | grep -q held; do
  [ $SECONDS -lt $deadline ] || fail "train ($train) never held: $(squeue -h -j "$train" -o '%T %r')"
  sleep 0.5
done
# What Slurm 22.05 shows of it: the state and reason status reads.
expect_eq "Slurm's view of the held train" "PENDING launch failed requeued held" "$(squeue -h -j "$train" -o '%T %r')"
capture "$trn" status "$c"
expect_eq "status of a held chain: exit 4" 4 "$rc"
expect_contains "train is held, and why" "held (launch failed requeued held): 'scontrol release $train'" \
  "$(grep ' train ' <<<"$out")"
expect_contains "the verdict says held" "held: train held" "$(tail -n 1 <<<"$out")"
capture timeout 30 "$trn" watch "$c" --interval 0.2
expect_eq "watch of a held chain ends, exit 4" 4 "$rc"
capture "$trn" cancel "$c"
expect_eq "cancel of the held chain" 0 "$rc"
expect_eq "no job of the held chain left" "" "$(active_jobs "$c")"
finish
