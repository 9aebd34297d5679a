# Pre-flight health on a cluster of its own (docs/health.md): three nodes, each its own fake
# Neuron tree (tests/fixtures/neuron/cluster/%n: n1 a trn1, n2 a trn1n, n3 a trn1 whose device 5
# counted uncorrectable SRAM errors). `doctor --cluster` names n3 and only n3.
# The libfabric and nofile checks read this machine, not the tree (no EFA provider here, and the
# machine's open-files limit), so the tests name the checks that read the trees.
set -euo pipefail
: "${TRNSLURM_SOURCE_DIR:?run through ctest}" "${TRNSLURM_BIN:?}" "${TRNSLURM_CLUSTER_DIR:?}"
source "$TRNSLURM_SOURCE_DIR/tests/lib/checks.sh"
dc=$TRNSLURM_SOURCE_DIR/scripts/dev-cluster
fixtures=$TRNSLURM_SOURCE_DIR/tests/fixtures
tree_checks=topology,errors,cores,efa,cache

trap '"$dc" down >/dev/null 2>&1 || true' EXIT
"$dc" up --nodes 3 --plugstack-args \
  "root=$fixtures/neuron/cluster/%n state_dir=$TRNSLURM_CLUSTER_DIR/spool/%n/trnslurm cache=$work/cache"
eval "$("$dc" env)"

# Every node, one job: n3 FAILs with its counter, the others pass; exit 1.
set +e
out=$("$TRNSLURM_BIN" doctor --cluster --nodes 3 --checks "$tree_checks")
rc=$?
set -e
expect_eq "doctor --cluster exit with a bad node" 1 "$rc"
expect_eq "one row per node, n3 alone failing" "n1 ok
n2 ok
n3 FAIL" "$(awk '{print $1, $2}' <<<"$out")"
expect_contains "n3's reason" "n3    FAIL  errors: neuron device 5: 3 uncorrectable SRAM errors (sram_ecc_uncorrected)" "$out"

# The same as JSON; the healthy nodes alone pass.
set +e
out=$("$TRNSLURM_BIN" doctor --cluster --nodelist 'n[1-3]' --checks "$tree_checks" --json)
rc=$?
set -e
expect_eq "--json exit" 1 "$rc"
expect_eq "--json failing nodes" "['n3']" "$(json '[n["node"] for n in j["nodes"] if n["status"] == "FAIL"]')"
expect_eq "--json verdict" "False" "$(json 'j["ok"]')"
out=$("$TRNSLURM_BIN" doctor --cluster --nodelist 'n[1-2]' --checks "$tree_checks")
expect_contains "the healthy nodes pass" "n2    ok    every check passed" "$out"

# A bad check name is a usage error before any job runs.
set +e
msg=$("$TRNSLURM_BIN" doctor --cluster --nodes 3 --checks errors,topolgy 2>&1)
rc=$?
set -e
expect_eq "bad --checks exit" 2 "$rc"
expect_contains "bad --checks message" "unknown check 'topolgy' (did you mean 'topology'?)" "$msg"
# Every node back in service once the jobs have completed (no node drained by a check).
states() { sinfo -h -N -o %t | sort -u | tr '\n' ' ' | sed 's/ $//'; }
for _ in $(seq 50); do [ "$(states)" != idle ] || break; sleep 0.2; done
expect_eq "node states after doctor --cluster" "idle" "$(states)"

# The collective on the CPU backend (nodes without Neuron devices: this machine's own tree): a
# gloo all_reduce and a ring of links; n3 answers slowly (the stand-in's knob) and is named.
"$dc" down >/dev/null
"$dc" up --nodes 3 --plugstack-args "state_dir=$TRNSLURM_CLUSTER_DIR/spool/%n/trnslurm"
set +e
out=$(TRNSLURM_STANDIN_SLOW_NODES=n3 "$TRNSLURM_BIN" doctor --cluster --nodes 3 --checks collective)
rc=$?
set -e
expect_eq "collective: exit with a slow node" 1 "$rc"
expect_eq "collective: n3 alone failing" "n1 ok
n2 ok
n3 FAIL" "$(awk '{print $1, $2}' <<<"$out")"
expect_contains "collective: why" "n3    FAIL  collective: this node is slow: its links n2->n3" "$out"
finish
