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

# The chain tests run trnslurm, and so their chains' jobs, as an unprivileged user (a cluster's
# users are not root): TRNSLURM_TEST_USER, default nobody (docs/security.md, "Who runs what in the
# tests"). The test scripts stay root: they kill nodes and read every file.
test_user=${TRNSLURM_TEST_USER:-nobody}

# Gives the test's directory to the test user and prints the path of a trnslurm that runs as that
# user, with the caller's environment and directory: a program, not a function, so that env,
# setsid and timeout can run it too; setpriv execs trnslurm, as a shell does, so signals reach it
# alone (runuser would stay its parent). The user's home and compile cache are the test's directory
# (the machine's default cache under /var/tmp is root's once a test as root made it).
trnslurm_as_test_user() {
  id -u "$test_user" >/dev/null 2>&1 || fail "TRNSLURM_TEST_USER: no user '$test_user' on this machine"
  chown -R "$test_user:" "$work"
  local as_user=(setpriv --reuid="$test_user" --regid="$(id -g "$test_user")" --init-groups --)
  (cd / && "${as_user[@]}" test -x "$TRNSLURM_BIN" -a -w "$work") ||
    fail "$test_user cannot run $TRNSLURM_BIN in $work: every directory above the build tree must be enterable by other users (chmod o+x), or TRNSLURM_TEST_USER must name a user who can"
  local wrapper=$work/.test-user/trnslurm
  mkdir -p "${wrapper%/*}"
  {
    echo '#!/bin/bash'
    # shellcheck disable=SC2016  # expanded by the wrapper
    printf 'export NEURON_COMPILE_CACHE_URL=${NEURON_COMPILE_CACHE_URL:-%q}\n' "$work/neuron-compile-cache"
    printf 'export HOME=%q USER=%q LOGNAME=%q\n' "$work" "$test_user" "$test_user"
    printf 'exec %s %q "$@"\n' "${as_user[*]@Q}" "$TRNSLURM_BIN"
  } >"$wrapper"
  chmod 755 "$wrapper"
  printf '%s\n' "$wrapper"
}
