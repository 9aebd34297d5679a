# The README's first commands from a checkout only its owner can enter (mode 700, as root's home
# is): the repository cloned there, then the demo's path (scripts/demo with the suite's build, not
# built again; its default, the current track's tiny-titan-cpu, ending in a Hugging Face checkpoint): the cluster's files go where the slurm account reaches them, slurmctld still runs
# as slurm, nothing above the checkout changes its mode, the demo's run stays in the checkout.
# Then what a user does next: the demo's `up` again reuses the cluster and says so, another node
# count replaces it and says why, and `eval "$(scripts/dev-cluster env)"` makes the README's next
# block (trnslurm init, plan, doctor --cluster) work in a new shell. Last, scripts/test's copy of
# the checkout where the tests' unprivileged user can reach it.
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
# The demo's default is the current track (tiny-titan-cpu): a Hugging Face checkpoint at the end.
run=$(dirname "$(ls "$checkout"/build/demo/runs/*/manifest.json)")/
expect_contains "the demo's run stays in the checkout" "Progress picture: ${run}progress.png" "$out"
expect_contains "the demo trained the TorchTitan recipe" "trnslurm init tiny-titan-cpu" "$out"
for f in config.json model.safetensors.index.json tokenizer.json tokenizer_config.json; do
  [ -s "$checkout/build/demo/export/$(basename "$run")/$f" ] || fail "no $f in the checkout's Hugging Face export"
  checks=$((checks + 1))
done

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

# scripts/test from this checkout: its jobs' user cannot enter it, so the suite runs from a copy
# under the runtime root (what is checked here is the copy; the suite itself is not run again).
echo "an edit not yet committed" >"$checkout/uncommitted.txt"
mkdir -p "$checkout/build/ci"
copy=$("$checkout/scripts/test" --where 2>"$work/where.err") || fail "scripts/test --where: $(cat "$work/where.err")"
trap '"$dc" down >/dev/null 2>&1 || true; rm -rf "${runtime:?}" "${copy:?}"' EXIT
expect_contains "scripts/test says where the suite runs" "nobody cannot enter $checkout: the suite runs from a copy of it, $copy" "$(cat "$work/where.err")"
expect_eq "the copy is under the runtime root" /var/lib/trnslurm-dev/checkout- "${copy%????????????}"
expect_eq "the copy is root's, mode 755" "0 755" "$(stat -c '%u %a' "$copy")"
expect_eq "the copy holds the working tree's edits" "an edit not yet committed" "$(cat "$copy/uncommitted.txt")"
[ ! -e "$copy/build" ] || fail "the checkout's build was copied"
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups test -r "$copy/scripts/cpu/torchtitan-neuron/torchtitan/train.py" ||
  fail "nobody cannot read the stand-ins in the copy"
mkdir -p "$copy/build/ci" && touch "$copy/build/ci/kept"
rm "$checkout/uncommitted.txt"
[ "$("$checkout/scripts/test" --where 2>/dev/null)" = "$copy" ] || fail "a second run chose another copy"
[ ! -e "$copy/uncommitted.txt" ] || fail "a file removed from the checkout stays in the copy"
[ -e "$copy/build/ci/kept" ] || fail "the copy's build was not kept between runs"
expect_eq "the checkout's mode still unchanged" 700 "$(stat -c %a "$home")"
rm -rf "$copy"
rm -rf "$home"  # the clone and the demo's run, kept when a check failed
finish
