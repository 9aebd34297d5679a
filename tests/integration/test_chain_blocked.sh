# On a cluster WITHOUT kill_invalid_depend (as many real ones are) and with the per-job
# --kill-on-invalid-dep=yes turned off: after a failed stage, its child pends with
# Reason=DependencyNeverSatisfied and its grandchild with Reason=Dependency. `status` shows both
# "blocked: <stage> failed", cancels them, and nothing of the chain stays in the queue.
# Runs on a cluster of its own (ports BASE+200...), brought down even when the test fails.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"

export TRNSLURM_CLUSTER_DIR=$work/cluster TRNSLURM_PORT_BASE=$((TRNSLURM_PORT_BASE + 200))
export TRNSLURM_DEPENDENCY_PARAMETERS=""
trap '"$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" down >/dev/null 2>&1 || true' EXIT
"$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" up >/dev/null
eval "$("$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" env)"
checks=$((checks + 1))
! grep -q '^DependencyParameters' "$TRNSLURM_CLUSTER_DIR/etc/slurm.conf" || fail "kill_invalid_depend still set"

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
finish
