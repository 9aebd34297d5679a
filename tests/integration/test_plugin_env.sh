# `trnslurm env` runs the plugin's own code: for each task of a real step it prints exactly
# what the plugin gave that task. `trnslurm doctor` reports each node's tree, EFA and plugstack.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/plugin_lib.sh"
: "${TRNSLURM_BIN:?}"

# Every name the plugin can set (one task per node and several), to pick them out of each task's env.
names=$({ "$TRNSLURM_BIN" env --node-name n1 --ignore-env --trn-root-comm --trn-efa=on
  "$TRNSLURM_BIN" env --node-name n1 --ignore-env --tasks-per-node 2; } | cut -d= -f1 | sort -u | tr '\n' '|')
names=${names%|}
srun -N 2 --ntasks-per-node=2 --trn-root-comm=48620 --trn-cache=/fsx/cache bash -c \
  'env | grep -E "^('"$names"')=" | sort >"$0/task.$SLURM_PROCID"' "$work"
for t in 0 1 2 3; do
  node=$((t / 2))
  expected=$("$TRNSLURM_BIN" env --ignore-env --node-name "n$((node + 1))" --nodes 2 --tasks-per-node 2 \
    --node-rank $node --local-id $((t % 2)) --nodelist 'n[1-2]' --trn-root-comm=48620 --trn-cache=/fsx/cache | sort)
  expect_eq "trnslurm env = what task $t got" "$expected" "$(cat "$work/task.$t")"
done
expect_contains "the comparison covers the core variables" "NEURON_RT_VISIBLE_CORES=16-31" "$(cat "$work/task.3")"

# --explain says why; refusals are the plugin's refusals, as a usage error.
out=$("$TRNSLURM_BIN" env --node-name n2 --tasks-per-node 4 --trn-cores=8 --explain)
expect_contains "--explain" "NEURON_RT_NUM_CORES=8  # 8 cores per task (--trn-cores)" "$out"
expect_contains "--explain names the site settings" "# site settings: $TRNSLURM_CLUSTER_DIR/etc/plugstack.conf:1" "$out"
set +e
msg=$("$TRNSLURM_BIN" env --node-name n1 --tasks-per-node 3 --trn-cores=16 2>&1)
rc=$?
set -e
expect_eq "trnslurm env refusal exit code" 2 "$rc"
expect_contains "trnslurm env refusal" "3 tasks x 16 cores per task need 48 NeuronCores, but this node has 32" "$msg"

# doctor, per node: each node's own tree and the slurmd's EFA answer (the checks that read the tree:
# libfabric and the open-files limit are this machine's, docs/health.md).
out=$("$TRNSLURM_BIN" doctor --node-name n2 --checks topology,errors,cores,efa)
expect_contains "doctor: plugin in plugstack.conf" "ok   plugstack  $TRNSLURM_CLUSTER_DIR/etc/plugstack.conf:1: required $TRNSLURM_PLUGIN" "$out"
expect_contains "doctor: Slurm versions" "ok   version    plugin built for Slurm 22.05, slurmctld runs 22.05" "$out"
expect_contains "doctor: n2's tree" "instance   trn1n.32xlarge" "$out"
expect_contains "doctor: devices" "ok   neuron     16 devices, 32 physical NeuronCores" "$out"
expect_contains "doctor: the node's type in the instance table" "ok   instances  trn1n.32xlarge (bundled)" "$out"
expect_contains "doctor: EFA" "ok   efa        slurmd's probe: absent" "$out"
expect_contains "doctor: n2's EFA devices" "ok   efa        16 EFA devices, as trn1n.32xlarge has" "$out"
expect_contains "doctor: n2's error counters" "ok   errors     48 uncorrectable-error counters, all zero" "$out"

# A plugstack.conf with a key the plugin does not know: doctor fails, and so does every srun,
# with a message that names the plugin (srun reads plugstack.conf through its own slurm.conf).
printf 'required %s colour=blue\n' "$TRNSLURM_PLUGIN" >"$work/plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$work/plugstack.conf|" "$SLURM_CONF" >"$work/slurm.conf"
set +e
out=$("$TRNSLURM_BIN" doctor --plugstack "$work/plugstack.conf" --no-probe)
rc=$?
set -e
expect_eq "doctor exit code on a bad plugstack argument" 1 "$rc"
expect_contains "doctor names the bad argument" "FAIL arguments  trnslurm: plugstack.conf: unknown argument 'colour'" "$out"
set +e
msg=$(SLURM_CONF=$work/slurm.conf srun -N 1 true 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "srun ran with an unknown plugstack argument"
checks=$((checks + 1))
expect_contains "srun names the plugin and the argument" "trnslurm: plugstack.conf: unknown argument 'colour'" "$msg"
printf '# nothing here\n' >"$work/empty.conf"
set +e
out=$("$TRNSLURM_BIN" doctor --plugstack "$work/empty.conf" --no-probe)
rc=$?
set -e
expect_eq "doctor exit code without the plugin" 1 "$rc"
expect_contains "doctor says the plugin is missing" "FAIL plugstack  no trnslurm.so line in $work/empty.conf" "$out"
settle "env and doctor"
finish
