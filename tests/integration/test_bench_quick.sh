# The cluster benches' quick modes on the shared test cluster, so a bench never rots between the
# runs that measure (bench/chain, bench/plugin_overhead): each runs once and its output is checked
# for what it reports, never for its times. sdiag's count of job queries is a count, and checked.
source "$(dirname "$0")/lib.sh"

# The baseline arm too (the same binary: only that the arm runs is checked).
out=$("$TRNSLURM_SOURCE_DIR/bench/chain" --quick --existing --trnslurm "$TRNSLURM_BIN" --baseline "$TRNSLURM_BIN" 2>&1) ||
  fail "bench/chain --quick failed: $out"
expect_match "chain: submit ratio" "^submit \(3 chains back to back.*: [0-9.]+x \(target <= 1.20x\)" "$out"
expect_match "chain: submit against the same calls" "^submit, against the same 12 sbatch calls trnslurm makes .*: [0-9.]+x$" "$out"
expect_match "chain: against the baseline" "^submit, against the baseline .*: [0-9.]+x \(the baseline against 12 x sbatch --parsable: [0-9.]+x\)$" "$out"
expect_match "chain: list ratio" "^list \(3 live chains.*: [0-9.]+x \(target <= 1.50x\)" "$out"
expect_match "chain: status ratio" "^status \(1 of 3 live chains.*: [0-9.]+x \(target <= 1.50x\)" "$out"
# One job query per refresh, whatever the number of chains.
expect_contains "chain: one squeue per refresh" "trnslurm list of 3 chains 1, trnslurm status 1," "$out"
expect_eq "chain: its jobs cancelled" "" "$(squeue -h -o %i)"

plugstack=$(cat "$TRNSLURM_CLUSTER_DIR/etc/plugstack.conf")
out=$("$TRNSLURM_SOURCE_DIR/bench/plugin_overhead" --quick --existing 2>&1) ||
  fail "bench/plugin_overhead --quick failed: $out"
expect_match "plugin: the arms" "median without plugin [0-9.]+ s, with [0-9.]+ s, minimal plugin [0-9.]+ s" "$out"
expect_match "plugin: with and without" "with/without, paired by round: median ratio [0-9.]+ \(overhead [-+][0-9.]+ %, interquartile [-+][0-9.]+ \.\. [-+][0-9.]+ %\), [-+][0-9.]+ us per task" "$out"
expect_match "plugin: the floor" "minimal plugin \(the floor\)/without, same rounds: median ratio [0-9.]+ \([-+][0-9.]+ %, interquartile" "$out"
expect_match "plugin: CPU time" "CPU time per step: median without plugin [0-9.]+ s, with [0-9.]+ s; with/without, paired by round: median ratio [0-9.]+ \(overhead [-+][0-9.]+ %, interquartile [-+][0-9.]+ \.\. [-+][0-9.]+ %\), [-+][0-9.]+ us per task, [-+][0-9.]+ ms per node" "$out"
expect_match "plugin: CPU time of the floor" "CPU time, minimal plugin \(the floor\)/without: median ratio [0-9.]+" "$out"
# The TorchTitan track's step: one task per node with --trn-launch=torchrun on the plugin's arm.
out=$("$TRNSLURM_SOURCE_DIR/bench/plugin_overhead" --quick --existing --launch torchrun 2>&1) ||
  fail "bench/plugin_overhead --quick --launch torchrun failed: $out"
expect_contains "plugin, torchrun step: the step measured" "srun -N N --ntasks-per-node=1 --trn-launch=torchrun true" "$out"
expect_match "plugin, torchrun step: CPU time per node" "CPU time per step: median without plugin [0-9.]+ s, with [0-9.]+ s; .* [-+][0-9.]+ ms per node" "$out"
# The meter's cgroup is gone and the cluster's slurmds are back where they were.
leftover=$(awk '$3 == "cgroup2" || ($3 == "cgroup" && $4 ~ /cpuacct/) {print $2}' /proc/mounts |
  while read -r m; do ls -d "$m"/trnslurm-bench-* 2>/dev/null || true; done)
expect_eq "plugin: no cgroup left behind" "" "$leftover"
expect_eq "plugin: plugstack.conf restored" "$plugstack" "$(cat "$TRNSLURM_CLUSTER_DIR/etc/plugstack.conf")"
expect_nodes_idle "the benches"
finish
