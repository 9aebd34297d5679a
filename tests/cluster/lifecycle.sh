# scripts/dev-cluster up && down, twice: every daemon it started is gone, no job process is
# left, no state survives, and `up` on a running cluster is a no-op.
set -euo pipefail
dc=$TRNSLURM_SOURCE_DIR/scripts/dev-cluster
conf=$TRNSLURM_CLUSTER_DIR/etc/slurm.conf

fail() {
  printf 'FAIL: %s\n' "$*" >&2
  "$dc" down || true
  exit 1
}

procs_of_cluster() {
  local p n=0
  for p in /proc/[0-9]*; do
    if { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$conf"; then n=$((n + 1)); fi
  done
  echo "$n"
}

for round in 1 2; do
  "$dc" up --nodes 3
  pids=$(cat "$TRNSLURM_CLUSTER_DIR"/run/*.pid)
  [ "$(wc -w <<<"$pids")" = 5 ] || fail "round $round: expected 5 daemons (munged, slurmctld, 3 slurmd), got: $pids"
  # A job left running must not survive `down`.
  eval "$("$dc" env)"
  sbatch -N 3 -o /dev/null --wrap 'srun sleep 300' >/dev/null
  sleep 1
  "$dc" up --nodes 3 2>&1 | grep -q 'already up' || fail "round $round: second up was not a no-op"
  [ "$(cat "$TRNSLURM_CLUSTER_DIR"/run/*.pid)" = "$pids" ] || fail "round $round: second up restarted daemons"
  "$dc" down
  for pid in $pids; do
    if kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/stat" 2>/dev/null | awk '{print $3}')" != Z ]; then
      fail "round $round: pid $pid still running after down"
    fi
  done
  [ "$(procs_of_cluster)" = 0 ] || fail "round $round: processes of the cluster left after down"
  for d in state spool run etc; do
    [ ! -e "$TRNSLURM_CLUSTER_DIR/$d" ] || fail "round $round: $d left after down"
  done
  if "$dc" status >/dev/null; then fail "round $round: status says up after down"; fi
done
# The node count is bounded (64: what this machine holds) and refused beyond, before anything starts.
if err=$("$dc" up --nodes 65 2>&1); then fail "up --nodes 65 was accepted"; fi
grep -q -- "--nodes must be a whole number from 2 to 64" <<<"$err" || fail "up --nodes 65: unexpected message: $err"
[ ! -e "$TRNSLURM_CLUSTER_DIR/run" ] || fail "up --nodes 65 started something"
echo "ok: lifecycle twice, nothing left behind"
