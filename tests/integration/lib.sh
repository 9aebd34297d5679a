# Shared by the integration tests: they run real srun/sbatch against the cluster CTest brought up
# (tests/CMakeLists.txt). Source it; it sets `set -euo pipefail` and exports SLURM_CONF.
set -euo pipefail
: "${TRNSLURM_SOURCE_DIR:?run through ctest}"
eval "$("$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" env)"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"

# Waits until none of the given jobs is pending or running (60 s at most).
wait_jobs() {
  local ids deadline=$((SECONDS + 60))
  ids=$(IFS=,; echo "$*")
  while [ -n "$(squeue -h -j "$ids" -t pending,running,configuring,completing -o %i 2>/dev/null)" ]; do
    [ $SECONDS -lt $deadline ] || fail "jobs $ids still in the queue after 60 s"
    sleep 0.2
  done
}

# No node may be drained or down after a test: a plugin failure in the wrong place drains nodes.
expect_nodes_idle() {
  expect_eq "node states after $1" "idle" "$(sinfo -h -N -o %t | sort -u | tr '\n' ' ' | sed 's/ $//')"
}

