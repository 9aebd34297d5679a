# The README's first commands from a checkout only its owner can enter (mode 700, as root's home
# is): the repository cloned there, then the demo's path (scripts/demo with the suite's build, not
# built again): the cluster's files go where the slurm account reaches them, slurmctld still runs
# as slurm, nothing above the checkout changes its mode, the demo's run stays in the checkout.
# Then what a user does next: the demo's `up` again reuses the cluster and says so, another node
# count replaces it and says why, and `eval "$(scripts/dev-cluster env)"` makes the README's next
# block (trnslurm init, plan, doctor --cluster) work in a new shell.
: "${TRNSLURM_SOURCE_DIR:?run through ctest}" "${TRNSLURM_BIN:?}" "${TRNSLURM_PLUGIN:?}" "${TRNSLURM_PORT_BASE:?}"
set -euo pipefail
source "$TRNSLURM_SOURCE_DIR/tests/lib/checks.sh"
[ "$(id -u)" = 0 ] || fail "needs root (the cluster's daemons), as the suite runs"
build=$(dirname "$(dirname "$TRNSLURM_BIN")")
[ "$(dirname "$TRNSLURM_PLUGIN")" = "$build/spank" ] || fail "TRNSLURM_BIN and TRNSLURM_PLUGIN are not of one build"

# The private directory is the test's cluster directory (build/<preset>/cluster-checkout), always
# the same: a cluster a killed earlier run left up in its clone is stopped here before it goes.
home=${TRNSLURM_CLUSTER_DIR:?}
checkout=$home/trnslurm
if [ -x "$checkout/scripts/dev-cluster" ]; then "$checkout/scripts/dev-cluster" down >/dev/null 2>&1 || true; fi
if [ -L "$checkout/.cluster" ]; then rm -rf "$(readlink "$checkout/.cluster")"; fi
rm -rf "$home"
mkdir -m 700 "$home"
git clone --quiet "$TRNSLURM_SOURCE_DIR" "$checkout"
# What is being tested is the working tree: its edits not yet committed go over the clone.
(cd "$TRNSLURM_SOURCE_DIR" && git ls-files -z -m -o --exclude-standard | tar -c --ignore-failed-read --null -T - -f - 2>/dev/null) |
  tar -x -C "$checkout"
dc=$checkout/scripts/dev-cluster
# The cluster the demo makes for itself: its default directory, the suite's port.
unset TRNSLURM_CLUSTER_DIR TRNSLURM_PLUGIN TRNSLURM_PLUGSTACK_ARGS
export NEURON_COMPILE_CACHE_URL=$work/neuron-compile-cache
trap '"$dc" down >/dev/null 2>&1 || true' EXIT

set +e
"$checkout/scripts/demo" --build-dir "$build" >"$work/demo.out" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || cat "$work/demo.out" >&2
expect_eq "the demo's exit in a mode-700 checkout" 0 "$rc"
out=$(cat "$work/demo.out")
expect_contains "the demo says where the cluster's files went" \
  "slurm cannot reach $home/trnslurm: the cluster's files are in /var/lib/trnslurm-dev/cluster-" "$out"
expect_eq "the checkout's mode unchanged" 700 "$(stat -c %a "$home")"
[ -L "$checkout/.cluster" ] || fail "$checkout/.cluster is not a link to the cluster's files"
runtime=$(readlink "$checkout/.cluster")
trap '"$dc" down >/dev/null 2>&1 || true; rm -rf "${runtime:?}"' EXIT
expect_eq "slurmctld runs as slurm" slurm "$(ps -o user= -p "$(cat "$runtime/run/slurmctld.pid")")"
expect_eq "the plugin the jobs load is the build's" "" "$(cmp "$build/spank/trnslurm.so" "$runtime/lib/trnslurm.so")"
run=$(ls -d "$checkout"/build/demo/runs/*/)
expect_contains "the demo's run stays in the checkout" "Progress picture: ${run}progress.png" "$out"
[ -s "$checkout/build/demo/export/$(basename "$run")/checkpoint.pt" ] || fail "no final checkpoint in the checkout"

# The demo again, as far as its cluster: reused, and said so; another shape replaces it, said why.
msg=$("$dc" up --plugin "$build/spank/trnslurm.so" --bin-dir "$build/cli" 2>&1)
expect_contains "a second up reuses the cluster" "already up (2 nodes) in $runtime: reusing it" "$msg"
msg=$("$dc" up --nodes 3 --plugin "$build/spank/trnslurm.so" --bin-dir "$build/cli" 2>&1)
expect_contains "another node count replaces it" "replacing the cluster in $runtime: it has 2 nodes, 3 asked" "$msg"

# The README's next block as written, in a new shell from the checkout, up to the plan (submit,
# watch and report are the demo's own commands, run above), then doctor --cluster on the cluster.
block=$(awk '/^After it, one line gives your shell/ { after = 1 } after && /^```$/ { exit }
  after && on && /^trnslurm submit/ { exit } after && on { print } after && /^```sh$/ { on = 1 }' "$checkout/README.md")
expect_contains "the README's block starts with the env line" 'eval "$(scripts/dev-cluster env)"' "$block"
mkdir "$work/user"
out=$(cd "$checkout" && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$work/user" bash -c "set -e
  $block
  command -v trnslurm
  trnslurm doctor --cluster --checks disk" 2>&1) || fail "the README's next block: $out"
expect_eq "trnslurm on PATH after the env line, then doctor --cluster on every node" "$build/cli/trnslurm
partition debug: checking all 3 nodes" "$(tail -n 5 <<<"$out" | sed -n '/^\//,/^partition/p')"
"$dc" down
rm -rf "$home"  # the clone and the demo's run, kept when a check failed
finish
