# Pre-flight health on a cluster of its own (docs/health.md): three nodes, each its own fake
# Neuron tree ($work/trees/%n, links to tests/fixtures/neuron: n1 a trn1, n2 a trn1n, n3 a trn1
# whose device 5 counted uncorrectable SRAM errors). `doctor --cluster` names n3 and only n3.
# The checks read the tree when they run, so the train stage's test re-points the links. The site
# lets the plugin drain a node its pre-flight finds broken (plugstack.conf preflight_drain=yes).
# The libfabric and nofile checks read this machine, not the tree (no EFA provider here, and the
# machine's open-files limit), so the tests name the checks that read the trees.
: "${TRNSLURM_SOURCE_DIR:?run through ctest}" "${TRNSLURM_BIN:?}" "${TRNSLURM_CLUSTER_DIR:?}"
# The integration tests' helpers (checks.sh, SLURM_CONF of this test's cluster, the test user).
source "$TRNSLURM_SOURCE_DIR/tests/integration/lib.sh"
dc=$TRNSLURM_SOURCE_DIR/scripts/dev-cluster
fixtures=$TRNSLURM_SOURCE_DIR/tests/fixtures
tree_checks=topology,errors,cores,efa,cache

trap '"$dc" down >/dev/null 2>&1 || true' EXIT
mkdir -p "$work/trees"
tree() { ln -sfn "$fixtures/neuron/$2" "$work/trees/$1"; }
tree n1 trn1
tree n2 trn1n
tree n3 trn1-ecc
"$dc" up --nodes 3 --plugstack-args "root=$work/trees/%n state_dir=$TRNSLURM_CLUSTER_DIR/spool/%n/trnslurm \
  cache=$work/cache preflight_drain=yes instances=$fixtures/instances/site.toml"
eval "$("$dc" env)"

# Every node, one job, without a node count (every usable node of the default partition): n3
# FAILs with its counter, the others pass; exit 1.
set +e
out=$("$TRNSLURM_BIN" doctor --cluster --checks "$tree_checks")
rc=$?
set -e
expect_eq "doctor --cluster exit with a bad node" 1 "$rc"
expect_eq "what it checks, then one row per node, n3 alone failing" "partition debug: checking all 3 nodes
n1 ok
n2 ok
n3 FAIL" "$(awk 'NR == 1 {print; next} {print $1, $2}' <<<"$out")"
expect_contains "n3's reason" "n3    FAIL  errors: neuron device 5: 3 uncorrectable SRAM errors (sram_ecc_uncorrected)" "$out"

# A drained node is out of service: left out and named, the others checked. Then back.
scontrol update NodeName=n2 State=DRAIN Reason=health.sh
set +e
out=$("$TRNSLURM_BIN" doctor --cluster --checks "$tree_checks")
rc=$?
set -e
expect_eq "with n2 drained: exit" 1 "$rc"
expect_eq "with n2 drained: n2 skipped, n1 and n3 checked" "partition debug: checking 2 nodes; skipped 1: n2 (drained)
n1 ok
n3 FAIL" "$(awk 'NR == 1 {print; next} {print $1, $2}' <<<"$out")"
set +e
out=$("$TRNSLURM_BIN" doctor --cluster -p debug --checks "$tree_checks" --json)
set -e
expect_eq "with n2 drained: --json" "debug n1,n3 n2:drained:drained" \
  "$(json 'j["partition"] + " " + ",".join(n["node"] for n in j["nodes"]) + " " + ",".join(":".join((s["node"], s["state"], s["why"])) for s in j["skipped"])')"
scontrol update NodeName=n2 State=RESUME
set +e
msg=$("$TRNSLURM_BIN" doctor --cluster -p trn9 2>&1)
rc=$?
set -e
expect_eq "an unknown partition: exit" 2 "$rc"
expect_contains "an unknown partition: message" "no partition 'trn9'" "$msg"

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
# Every node back in service once the jobs have completed: doctor --cluster's step is no
# pre-flight, so the plugin drains nothing, though n3 is broken and the site allows draining.
states() { sinfo -h -N -o %t | sort -u | tr '\n' ' ' | sed 's/ $//'; }
for _ in $(seq 50); do [ "$(states)" != idle ] || break; sleep 0.2; done
expect_eq "node states after doctor --cluster" "idle" "$(states)"

# The train stage's pre-flight, as the chain tests run it: submitted by an unprivileged user
# (chain_lib.sh). A chain whose train asks for two of the three nodes, n1 now the broken one (n1
# the trn1 with SRAM errors, n2 a trn1n, n3 a trn1). Slurm gives train n1 and n2 first; the
# pre-flight excludes n1, the job requeues itself and trains on n2 and n3. Its requeue is not one
# of max_restarts (0 here). The user may not drain a node, but the plugin, as root at the end of
# the pre-flight's step, re-checks n1 and drains it; n2 and n3 pass its re-check and stay.
tree n1 trn1-ecc
tree n3 trn1
source "$TRNSLURM_SOURCE_DIR/tests/integration/chain_lib.sh"  # in $work, the chain test recipe
capture "$trn" submit --samples 1000 --set stages.train.preflight=true \
  --set "stages.train.preflight_checks=$tree_checks" \
  --set stages.train.max_restarts=0 --set stages.train.max_exclusions=1
chain=$(chain_of "$out")
[ -n "$chain" ] || fail "no chain id in: $out"
expect_eq "the chain completes without the bad node" 0 "$(wait_chain "$chain" 90)"
capture "$trn" status "$chain"
expect_contains "status reports the exclusion" "train excluded n1 (job" "$out"
expect_contains "status gives the reason" \
  "n1: errors: neuron device 5: 3 uncorrectable SRAM errors (sram_ecc_uncorrected)" "$out"
expect_contains "the restart says why" "a node failed the pre-flight health checks" "$out"
capture "$trn" status --json "$chain"
expect_eq "status --json: the exclusion's nodes and reason" \
  "['n1'] n1: errors: neuron device 5: 3 uncorrectable SRAM errors (sram_ecc_uncorrected)" \
  "$(json '" ".join(str(x) for e in j["restarts"] if e["event"] == "exclude" for x in (e["nodes"], e["why"]))')"
capture "$trn" status "$chain"
train_job=$(sed -n 's/^ *train  *\([0-9][0-9]*\) .*/\1/p' <<<"$out")
# The cluster's job completion log (jobcomp/filetxt) has a line for each run of the job.
ran_on=$(grep "^JobId=$train_job .* Name=trn-$chain-train " "$TRNSLURM_CLUSTER_DIR/log/jobcomp.txt" |
  sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p' | tr '\n' ' ')
expect_eq "train ran on n1 and n2, then on the healthy nodes" "n[1-2] n[2-3] " "$ran_on"
run_dir=$(ls -d "$work"/runs/*/)
expect_eq "every stage ran once" "convert precompile train convert_back" \
  "$(tr '\n' ' ' <"${run_dir}order" | sed 's/ $//')"
expect_eq "the restarts log: the exclusion, then the restart it caused" "exclude preflight ['n1']
restart preflight []" "$(/usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    print(e["event"], e["cause"], e.get("nodes", []))' <"${run_dir}logs/train-restarts.jsonl")"
expect_contains "the train log says n1 was drained" "trnslurm: pre-flight: drained n1" \
  "$(cat "${run_dir}logs/train-$train_job.out")"
expect_contains "status says n1 was drained" "    drained n1" "$("$trn" status "$chain")"
expect_eq "n1 drained by the plugin with the reason" \
  "drain trnslurm: errors: neuron device 5: 3 uncorrectable SRAM errors (sram_ecc_uncorrected)" \
  "$(sinfo -h -n n1 -o '%t %E')"
expect_eq "the healthy nodes not drained" "idle" "$(sinfo -h -n n2,n3 -o %t | sort -u)"
scontrol update NodeName=n1 State=RESUME
for _ in $(seq 50); do [ "$(sinfo -h -n n1 -o %t)" != idle ] || break; sleep 0.2; done
expect_eq "n1 back in service" idle "$(sinfo -h -n n1 -o %t)"

# Past max_exclusions the train stage gives up, and status says on which node and why: a chain of
# the train stage alone, n1 still broken and first in line, whose recipe opts out of draining
# (preflight_drain = false): n1 stays in service.
capture "$trn" submit --samples 1000 --set stages.train.preflight=true \
  --set "stages.train.preflight_checks=$tree_checks" --set stages.train.max_exclusions=0 \
  --set stages.train.preflight_drain=false --set stages.convert.enabled=false \
  --set stages.precompile.enabled=false --set stages.convert_back.enabled=false
chain=$(chain_of "$out")
[ -n "$chain" ] || fail "no chain id in: $out"
expect_eq "the chain fails past max_exclusions" 1 "$(wait_chain "$chain" 60)"
capture "$trn" status "$chain"
expect_contains "status says why it gave up" \
  "train gave up: n1 failed the pre-flight with max_exclusions = 0 used up: n1: errors: neuron device 5" "$out"
expect_contains "status says the recipe opted out" \
  "train gave up; not drained: the recipe sets preflight_drain = false" "$out"
expect_eq "n1 not drained" "" "$(scontrol show node -o n1 | grep -o 'State=[^ ]*DRAIN[^ ]*' || true)"

# The collective on the CPU backend (nodes without Neuron devices: this machine's own tree): a
# gloo all_reduce and a ring of links; n3 answers slowly (the stand-in's knob) and is named.
# The collective on three nodes, n3 made slow: n3 alone FAILs, for the reason given.
expect_slow_n3() {  # LABEL WHY
  set +e
  out=$(TRNSLURM_STANDIN_SLOW_NODES=n3 "$TRNSLURM_BIN" doctor --cluster --nodes 3 --checks collective)
  rc=$?
  set -e
  [ "$rc" = 1 ] || printf '%s\n' "$out" >&2  # what the nodes said, to tell why
  expect_eq "$1: exit with a slow node" 1 "$rc"
  expect_eq "$1: n3 alone failing" "n1 ok
n2 ok
n3 FAIL" "$(awk '{print $1, $2}' <<<"$out")"
  expect_contains "$1: why" "$2" "$out"
}
for n in n1 n2 n3; do ln -sfn / "$work/trees/$n"; done
expect_slow_n3 collective "n3    FAIL  collective: this node is slow: its links n2->n3"

# The collective on Neuron nodes: nccom-test across the step's nodes, here its CPU stand-in
# (scripts/cpu/nccom-test, named by TRNSLURM_NCCOM_TEST). Three trn1 nodes, n3 slow: the whole
# step is far below what trn1.32xlarge should reach (the stand-in is a CPU), so the pairs of the
# ring run and name n3.
export TRNSLURM_NCCOM_TEST=$TRNSLURM_SOURCE_DIR/scripts/cpu/nccom-test
for n in n1 n2 n3; do tree $n trn1; done
expect_slow_n3 nccom-test "n3    FAIL  collective: this node is slow: its pairs n2-n3 "
# Healthy nodes of the site's type, whose collective_busbw_gb_per_s the stand-in reaches: the
# whole step passes, with its figure.
for n in n1 n2; do tree $n trnx; done
out=$("$TRNSLURM_BIN" doctor --cluster --nodelist 'n[1-2]' --checks collective --json)
expect_eq "nccom-test: healthy nodes pass" "True" "$(json 'j["ok"]')"
expect_contains "nccom-test: the figure" "nccom-test all_reduce across 2 nodes: " \
  "$(json 'j["nodes"][0]["checks"][0]["detail"]')"
finish
