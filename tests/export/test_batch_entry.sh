# The exported AWS Batch entry point on two "nodes" of this machine (docs/export.md): two
# containers' worth of entry.sh, given the variables AWS Batch gives the nodes of a multi-node
# parallel job (the main node without AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS, as Batch
# leaves it out there), run the exported train stage: the main node's srun runs torchrun on both,
# with the plugin's variables as task-env.sh renders them, and the four workers form one gloo
# process group on the main node's address. Then a child node that never starts: the main node
# ends the step and exits 75, the status the job definition retries.
set -euo pipefail
source "$(dirname "$0")/../lib/checks.sh"
: "${TRNSLURM_BIN:?run through ctest}" "${TRNSLURM_SOURCE_DIR:?}"
cd "$work"
# BASE+91: no cluster of the suite uses it (test_neuron_recipes.sh's chains take BASE+61 on).
port=$((${TRNSLURM_TEST_PORT_BASE:-24000} + 91))
probe=$TRNSLURM_SOURCE_DIR/tests/export/rendezvous_probe.py
read -r main_addr _ < <(hostname -I)

# tiny-cpu's model, plan and cluster; a train stage launched as the NxD stages launch torchrun
# (one task per node, torchrun's node rank and master from the plugin's variables).
"$TRNSLURM_BIN" init tiny-cpu >/dev/null
sed -n '/^\[upstream\]/q;p' trnslurm.toml >recipe.toml
cat >>recipe.toml <<TOML
[stages.convert]
enabled = false
[stages.precompile]
enabled = false
[stages.convert_back]
enabled = false
[stages.train]
time = "00:05:00"
env = { GLOO_SOCKET_IFNAME = "lo", TRN_PROBE_RECIPE_ENV = "{{stage}}" }
command = """
mkdir -p {{run_dir}}/rendezvous
srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c 'exec "\$0" --nnodes "\$TRNSLURM_NNODES" --node_rank "\$TRNSLURM_NODE_RANK" --master_addr "\$MASTER_ADDR" --master_port "\$MASTER_PORT" "\$@"' \\\\
  {{backend_dir}}/neuron-venv/bin/torchrun --nproc_per_node 2 $probe {{run_dir}}/rendezvous
"""
TOML
out=$("$TRNSLURM_BIN" export -r recipe.toml --samples 2000 --to aws-batch --image local --job-queue q \
  --vcpus 2 --memory-mib 4096 --runs-dir "$work/runs" --json)
run_dir=$(json 'j["run_dir"]')
entry=$run_dir/aws-batch/entry.sh
expect_eq "the export's stages" "['train']" "$(json 'j["stages"]')"

# node INDEX [VAR=VALUE...]: one container of job 'job1' of two nodes, as Batch starts it.
node() {
  local index=$1
  shift
  env -u AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS -u MASTER_ADDR -u MASTER_PORT \
    AWS_BATCH_JOB_ID="job1#$index" AWS_BATCH_JOB_ATTEMPT="$attempt" AWS_BATCH_JOB_NUM_NODES=2 \
    AWS_BATCH_JOB_MAIN_NODE_INDEX=0 AWS_BATCH_JOB_NODE_INDEX="$index" MASTER_PORT="$port" \
    TRNSLURM_BATCH_HEARTBEAT=1 "$@" timeout 240 bash "$entry" train
}

attempt=1
rc0=0 rc1=0
node 0 >main.log 2>&1 &
pid0=$!
node 1 AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS="$main_addr" >child.log 2>&1 &
pid1=$!
wait "$pid0" || rc0=$?
wait "$pid1" || rc1=$?
expect_eq "the main node's container exits 0" 0 "$rc0" || { cat main.log child.log >&2; }
expect_eq "the child node's container exits 0" 0 "$rc1" || { cat main.log child.log >&2; }
expect_contains "the main node takes its own address" "main node 0 at $main_addr" "$(cat main.log)"
for r in 0 1 2 3; do
  f=$run_dir/rendezvous/rank-$r.json
  [ -f "$f" ] || fail "rank $r wrote nothing: $(cat main.log child.log)"
  out=$(cat "$f")
  expect_eq "rank $r: world" 4 "$(json 'j["world"]')"
  expect_eq "rank $r: the ranks summed over the group" 6 "$(json 'j["sum"]')"
  expect_eq "rank $r: master address" "$main_addr" "$(json 'j["master_addr"]')"
  expect_eq "rank $r: master port (the environment's, over the plugin's default)" "$port" "$(json 'j["master_port"]')"
  expect_eq "rank $r: torchrun's node rank is the node index" "$(json 'j["group_rank"]')" "$(json 'j["node_rank"]')"
  expect_eq "rank $r: nodes" 2 "$(json 'j["nnodes"]')"
  expect_eq "rank $r: the plugin's MALLOC_ARENA_MAX (task-env.sh)" 64 "$(json 'j["malloc_arena_max"]')"
  expect_eq "rank $r: the recipe's stage env, as srun passes it" train "$(json 'j["recipe_env"]')"
done
out=$(cat "$run_dir"/rendezvous/rank-*.json | /usr/bin/python3 -c 'import json,sys; print(json.dumps(sorted({json.loads(l)["group_rank"] for l in sys.stdin.read().replace("}{", "}\n{").splitlines()})))')
expect_eq "workers on both nodes" "[0, 1]" "$out"

# A child node that never starts (its instance lost before the container ran): the main node
# ends its own torchrun, waiting at the rendezvous, and exits 75.
attempt=2
rc0=0
node 0 TRNSLURM_BATCH_START_TIMEOUT=3 >lost.log 2>&1 || rc0=$?
expect_eq "a lost node: the main node exits 75 (retried)" 75 "$rc0" || cat lost.log >&2
expect_contains "and says which node" "node 1 stopped answering" "$(cat lost.log)"
finish
