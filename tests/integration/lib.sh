# Shared by the integration tests: they run real srun/sbatch against the cluster CTest brought up
# (tests/CMakeLists.txt). Source it; it sets `set -euo pipefail` and exports SLURM_CONF.
set -euo pipefail
: "${TRNSLURM_SOURCE_DIR:?run through ctest}"
eval "$("$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" env)"
work=$(mktemp -d "${TRNSLURM_TEST_TMP:-/tmp}/$(basename "$0" .sh).XXXXXX" 2>/dev/null ||
  { mkdir -p "${TRNSLURM_TEST_TMP:-/tmp}" && mktemp -d "${TRNSLURM_TEST_TMP:-/tmp}/$(basename "$0" .sh).XXXXXX"; })
checks=0

fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}

expect_eq() {  # expect_eq WHAT EXPECTED ACTUAL
  checks=$((checks + 1))
  [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

expect_contains() {  # expect_contains WHAT NEEDLE HAYSTACK
  checks=$((checks + 1))
  case $3 in *"$2"*) ;; *) fail "$1: expected to contain '$2', got: $3" ;; esac
}

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

finish() {
  [ "$checks" -gt 0 ] || fail "no check ran"
  printf 'ok: %d checks\n' "$checks"
}
