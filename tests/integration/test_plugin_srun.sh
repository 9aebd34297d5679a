# The plugin, loaded by real srun/slurmstepd on a two-node cluster whose nodes each have their
# own fake Neuron tree (tests/CMakeLists.txt: root=.../fixtures/neuron/cluster/%n, n1 a
# trn1.32xlarge, n2 a trn1n.32xlarge, 16 devices x 2 cores each): what each task sees.
source "$(dirname "$0")/lib.sh"
master_port=$((TRNSLURM_PORT_BASE + 50))  # scripts/dev-cluster gives each cluster its own
source "$(dirname "$0")/plugin_lib.sh"

show='printf "%s %s vc=%s nc=%s rank=%s/%s local=%s/%s node=%s/%s master=%s:%s\n" "$SLURM_PROCID" "$(hostname)" "${NEURON_RT_VISIBLE_CORES-unset}" "${NEURON_RT_NUM_CORES-unset}" "${RANK-unset}" "${WORLD_SIZE-unset}" "${LOCAL_RANK-unset}" "${LOCAL_WORLD_SIZE-unset}" "${TRNSLURM_NODE_RANK-unset}" "${TRNSLURM_NNODES-unset}" "${MASTER_ADDR-unset}" "${MASTER_PORT-unset}"'

# Two tasks per node: per-task mode splits each node's 32 cores. n1 does not resolve (no DNS
# here): MASTER_ADDR falls back to Slurm's NodeAddr for n1, 127.0.0.1.
out=$(srun -N 2 --ntasks-per-node=2 --kill-on-bad-exit=1 bash -c "$show" | sort -n)
expect_eq "per-task, 2 tasks per node" "0 n1 vc=0-15 nc=16 rank=0/4 local=0/2 node=0/2 master=127.0.0.1:$master_port
1 n1 vc=16-31 nc=16 rank=1/4 local=1/2 node=0/2 master=127.0.0.1:$master_port
2 n2 vc=0-15 nc=16 rank=2/4 local=0/2 node=1/2 master=127.0.0.1:$master_port
3 n2 vc=16-31 nc=16 rank=3/4 local=1/2 node=1/2 master=127.0.0.1:$master_port" "$out"

# One task per node (torchrun): every core, no per-rank variables (torchrun sets those).
out=$(srun -N 2 --ntasks-per-node=1 bash -c "$show"'; echo "nproc ${TRNSLURM_NPROC_PER_NODE-unset}"' | LC_ALL=C sort)
expect_eq "per-node, 1 task per node" "0 n1 vc=0-31 nc=32 rank=unset/unset local=unset/unset node=0/2 master=127.0.0.1:$master_port
1 n2 vc=0-31 nc=32 rank=unset/unset local=unset/unset node=1/2 master=127.0.0.1:$master_port
nproc 32
nproc 32" "$out"

# srun -N2 -n 32: sixteen tasks per node, two cores each, every core given exactly once per node.
out=$(srun -N 2 -n 32 --ntasks-per-node=16 bash -c 'echo "$(hostname) $SLURM_LOCALID $NEURON_RT_VISIBLE_CORES"' | sort -k1,1 -k2,2n)
expected=$(for n in n1 n2; do for i in $(seq 0 15); do echo "$n $i $((2 * i))-$((2 * i + 1))"; done; done)
expect_eq "32 tasks on two nodes" "$expected" "$out"

# A fixed count per task.
out=$(srun -N 1 -n 4 --trn-cores=8 bash -c 'echo "$SLURM_LOCALID $NEURON_RT_VISIBLE_CORES $NEURON_RT_NUM_CORES"' | sort -n)
expect_eq "--trn-cores=8" "0 0-7 8
1 8-15 8
2 16-23 8
3 24-31 8" "$out"

# Each node read its own tree: the reasons name each node's instance type.
out=$(srun -N 2 --trn-verbose bash -c true 2>&1 | grep 'NEURON_RT_NUM_CORES=' | sort)
expect_contains "n1 read its own tree" "n1 task 0: NEURON_RT_NUM_CORES=32 (per-node" "$out"
expect_contains "n1 is a trn1" "of a trn1.32xlarge" "$(grep 'n1 task' <<<"$out")"
expect_contains "n2 is a trn1n" "of a trn1n.32xlarge" "$(grep 'n2 task' <<<"$out")"

# EFA: the slurmd probed once at start (libfabric here has no efa device) and saved the answer;
# auto leaves FI_* alone and says why; on forces them; off never sets them.
state=$(cat "$TRNSLURM_CLUSTER_DIR/spool/n1/trnslurm/efa")
expect_contains "slurmd's EFA probe result" "state=absent" "$state"
# ... in a child process: libfabric never loaded into slurmd itself (some EFA providers register
# a fork handler that aborts slurmd's next fork), though it is loadable here (state=absent, not
# "not loadable").
for n in n1 n2; do
  expect_eq "libfabric mapped in slurmd $n" 0 "$(grep -c libfabric "/proc/$(cat "$TRNSLURM_CLUSTER_DIR/run/slurmd-$n.pid")/maps" || true)"
done
expect_contains "libfabric is loadable here" "fi_getinfo(prov_name=efa)" "$state"
fi_vars='echo "${FI_PROVIDER-unset} ${FI_EFA_USE_DEVICE_RDMA-unset} ${FI_EFA_FORK_SAFE-unset}"'
expect_eq "EFA auto without a provider" "unset unset unset" "$(srun -N 2 bash -c "$fi_vars" | sort -u)"
msg=$(srun -N 1 --trn-verbose true 2>&1)
expect_contains "EFA auto says why" "no efa provider (absent: fi_getinfo(prov_name=efa): -61" "$msg"
expect_eq "EFA forced on" "efa 1 1" "$(srun -N 2 --trn-efa=on bash -c "$fi_vars" | sort -u)"
expect_eq "EFA off" "unset unset unset" "$(srun -N 2 --trn-efa=off bash -c "$fi_vars" | sort -u)"
expect_eq "EFA on, the user's FI_PROVIDER wins" "tcp 1 1" \
  "$(FI_PROVIDER=tcp srun -N 1 --trn-efa=on bash -c "$fi_vars")"

# A node whose slurmd found an efa provider (its answer written here as the slurmd writes it,
# root-owned, 0644): auto sets FI_* on that node only. The same answer in a file others could
# write is not trusted. The real answer is put back afterwards.
efa_file=$TRNSLURM_CLUSTER_DIR/spool/n2/trnslurm/efa
cp -p "$efa_file" "$work/efa.saved"
restore_efa() { cp -p "$work/efa.saved" "$efa_file"; }
trap restore_efa EXIT
printf 'state=present\ndetail=fi_getinfo found the efa provider\n' >"$efa_file.new"
chmod 0644 "$efa_file.new"
mv "$efa_file.new" "$efa_file"
expect_eq "EFA auto, efa provider on n2 only" "n1 unset unset unset
n2 efa 1 1" "$(srun -N 2 bash -c 'echo "$(hostname) ${FI_PROVIDER-unset} ${FI_EFA_USE_DEVICE_RDMA-unset} ${FI_EFA_FORK_SAFE-unset}"' | sort)"
chmod 0666 "$efa_file"
expect_eq "EFA answer writable by others is ignored" "unset" "$(srun -N 1 -w n2 bash -c 'echo "${FI_PROVIDER-unset}"')"
expect_contains "and says why" "not owned by root or writable by others: not trusted" "$(srun -N 1 -w n2 --trn-verbose true 2>&1)"
restore_efa
trap - EXIT

# Root comm only on request; the cache option; the runtime defaults.
expect_eq "no root comm by default" "unset" "$(srun -N 1 bash -c 'echo "${NEURON_RT_ROOT_COMM_ID-unset}"')"
expect_eq "--trn-root-comm" "127.0.0.1:46820" "$(srun -N 2 --trn-root-comm bash -c 'echo "$NEURON_RT_ROOT_COMM_ID"' | sort -u)"
expect_eq "--trn-root-comm=PORT" "127.0.0.1:48620" "$(srun -N 1 --trn-root-comm=48620 bash -c 'echo "$NEURON_RT_ROOT_COMM_ID"')"
expect_eq "--trn-cache and runtime defaults" "/fsx/cache 64 3 1 1" \
  "$(srun -N 1 --trn-cache=/fsx/cache bash -c 'echo "$NEURON_COMPILE_CACHE_URL $MALLOC_ARENA_MAX $NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS $NEURON_RT_STOCHASTIC_ROUNDING_EN $NEURON_FUSE_SOFTMAX"')"

# What the user set wins over the plugin and over its options.
expect_eq "user values kept" "8 /mine 3" \
  "$(MALLOC_ARENA_MAX=8 NEURON_COMPILE_CACHE_URL=/mine NEURON_RT_VISIBLE_CORES=3 srun -N 1 -n 2 --trn-cache=/fsx \
    bash -c 'echo "$MALLOC_ARENA_MAX $NEURON_COMPILE_CACHE_URL $NEURON_RT_VISIBLE_CORES"' | sort -u)"

# --trn-env=off touches nothing.
plugin_vars='^(NEURON_|FI_|MASTER_|TRNSLURM_(NODE_RANK|NNODES|NPROC_PER_NODE)=|MALLOC_ARENA_MAX=|RANK=|WORLD_SIZE=|LOCAL_RANK=|LOCAL_WORLD_SIZE=)'
expect_eq "--trn-env=off" "" "$(srun -N 2 --trn-env=off env | grep -E "$plugin_vars" || true)"
expect_contains "plugin on sets them" "MASTER_ADDR=" "$(srun -N 1 env | grep -E "$plugin_vars")"

# Its options are advertised by both front ends.
for front in srun sbatch; do
  help=$($front --help)
  for opt in "--trn-env=on|off" "--trn-cores=per-node|per-task|N" "--trn-efa=auto|on|off" "--trn-cache=DIR" \
    "--trn-root-comm=PORT" "--trn-verbose"; do
    expect_contains "$front --help" "$opt" "$help"
  done
done

# Bad values refuse the submission with the plugin's message (exit 255) and drain nothing.
for bad in "--trn-env=maybe|--trn-env: invalid value 'maybe'" "--trn-cores=lots|--trn-cores: invalid value 'lots'" \
  "--trn-efa=yes|--trn-efa: invalid value 'yes'" "--trn-root-comm=99999|--trn-root-comm: invalid port '99999'" \
  "--trn-cache=relative|--trn-cache: invalid compile cache 'relative'"; do
  opt=${bad%%|*}
  for front in srun sbatch; do
    set +e
    if [ $front = srun ]; then msg=$(srun -N 2 "$opt" true 2>&1); else msg=$(sbatch "$opt" --wrap true 2>&1); fi
    rc=$?
    set -e
    expect_eq "$front $opt exit code" 255 "$rc"
    expect_contains "$front $opt message" "trnslurm: ${bad#*|}" "$msg"
  done
done
# The same option through the environment (how #SBATCH values reach the sruns of a job) is
# checked by srun too; a good one works.
set +e
msg=$(SLURM_SPANK__SLURM_SPANK_OPTION_trnslurm_trn_cores=lots srun -N 1 true 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "srun accepted --trn-cores=lots from the environment"
expect_contains "bad value from the environment" "trnslurm: --trn-cores: invalid value 'lots'" "$msg"
expect_eq "good value from the environment" "0-3 4-7" \
  "$(SLURM_SPANK__SLURM_SPANK_OPTION_trnslurm_trn_cores=4 srun -N 1 -n 2 bash -c 'echo "$NEURON_RT_VISIBLE_CORES"' | sort | tr '\n' ' ' | sed 's/ $//')"
settle "bad option values"

# More cores asked for than the node has: the tasks fail in task_init, cleanly, with the reason.
set +e
msg=$(srun -N 1 -n 3 --trn-cores=16 true 2>&1)
rc=$?
set -e
expect_eq "too many cores: srun exit code" 1 "$rc"
expect_contains "too many cores: message" "3 tasks x 16 cores per task need 48 NeuronCores, but this node has 32" "$msg"
set +e
msg=$(srun -N 1 -n 2 --trn-cores=per-node true 2>&1)
rc=$?
set -e
expect_eq "per-node with 2 tasks: srun exit code" 1 "$rc"
expect_contains "per-node with 2 tasks: message" "this node runs 2 tasks of the step" "$msg"
settle "refused tasks"

# An srun inside a step (or from the interactive step) inherits what the plugin set for the outer
# step: the mark (TRNSLURM_SET) makes the inner step decide those again (its own node ranks and
# core split), while a value the user changed in between (MASTER_PORT) stays the user's.
cat >"$work/nested.sh" <<'EOF2'
#!/bin/bash
srun -N 1 -n 1 bash -c 'export MASTER_PORT=1234
srun -N 2 -n 4 --ntasks-per-node=2 --overlap bash -c "echo \$SLURM_NODEID=\$TRNSLURM_NODE_RANK/\$TRNSLURM_NNODES \$NEURON_RT_VISIBLE_CORES \$MASTER_PORT"'
EOF2
jobid=$(sbatch --parsable -N 2 --ntasks-per-node=2 -o "$work/nested.out" "$work/nested.sh")
wait_jobs "$jobid"
expect_eq "a nested srun decides again what the plugin set for the outer step" \
  "0=0/2 0-15 1234|0=0/2 16-31 1234|1=1/2 0-15 1234|1=1/2 16-31 1234" "$(sort "$work/nested.out" | tr '\n' '|' | sed 's/|$//')"
settle "a nested srun"
finish
