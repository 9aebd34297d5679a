# The exported Kubernetes entry point on two "pods" of this machine (docs/export-k8s.md): each pod is
# a process in its own UTS and mount namespace, with the host name the MPI Operator gives the pod
# and an /etc/hosts that resolves the names of the job's service domain (what the cluster's DNS
# does), given K_MPI_JOB_ROLE, and for the launcher the operator's hostfile at the path
# OMPI_MCA_orte_default_hostfile names, written as mpi-operator 0.8.2 writes it for an MPIJob
# with runLauncherAsWorker (pkg/controller/mpi_job_controller.go, newConfigMap). They run the
# exported train stage: the launcher's srun runs torchrun on both, with the plugin's variables as
# task-env.sh renders them, and the four workers form one gloo process group on the launcher's
# host name, found in the hostfile. Then a worker that never comes: the launcher exits 75 (the
# Job retries it); a worker started again within an attempt: 75, and the next attempt, which it
# joins, succeeds; then the stage's own failure: recorded, and the next launcher of the same Job
# exits with it at once, while a new MPIJob's runs the stage again.
set -euo pipefail
source "$(dirname "$0")/../lib/checks.sh"
: "${TRNSLURM_BIN:?run through ctest}" "${TRNSLURM_SOURCE_DIR:?}"
cd "$work"
if ! unshare -m -u true 2>/dev/null; then
  echo "SKIP: no mount and UTS namespaces here (unshare -m -u needs root)"
  exit 77
fi
# BASE+92: no cluster of the suite uses it (test_neuron_recipes.sh's chains take BASE+61 on).
port=$((${TRNSLURM_TEST_PORT_BASE:-24000} + 92))
probe=$TRNSLURM_SOURCE_DIR/tests/export/rendezvous_probe.py

# tiny-cpu's model, plan and cluster (two nodes); a train stage launched as the Batch test's, that
# fails with 3 when the launcher's environment has TRN_PROBE_FAIL and ends at once (0) with
# TRN_PROBE_QUICK.
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
srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c '[ -z "\${TRN_PROBE_FAIL:-}" ] || exit 3; [ -z "\${TRN_PROBE_QUICK:-}" ] || exit 0; exec "\$0" --nnodes "\$TRNSLURM_NNODES" --node_rank "\$TRNSLURM_NODE_RANK" --master_addr "\$MASTER_ADDR" --master_port "\$MASTER_PORT" "\$@"' \\\\
  {{backend_dir}}/neuron-venv/bin/torchrun --nproc_per_node 2 $probe {{run_dir}}/rendezvous
"""
TOML
args=(export -r recipe.toml --samples 2000 --to k8s --image local --namespace ns1 --runs-dir "$work/runs")
# Each directory the export says every pod must see, as the claim of its own.
claims=()
if out=$("$TRNSLURM_BIN" "${args[@]}" 2>&1); then fail "an export without claims: $out"; fi
IFS=, read -ra dirs <<<"$(printf '%s\n' "$out" | sed -n 's/.*no volume claim for \(.*\), which every pod must see.*/\1/p' | tr -d ' ')"
[ "${#dirs[@]}" -gt 0 ] || fail "no shared directory named: $out"
for d in "${dirs[@]}"; do claims+=(--volume-claim "$d=claim$((${#claims[@]} / 2))"); done
out=$("$TRNSLURM_BIN" "${args[@]}" "${claims[@]}" --json)
run_dir=$(json 'j["run_dir"]')
entry=$run_dir/k8s/entry.sh
expect_eq "the export's stages" "['train']" "$(json 'j["stages"]')"
out=$(cat "$run_dir/k8s/mpijobs/train.json")
name=$(json 'j["metadata"]["name"]')
expect_eq "one worker beside the launcher" 1 "$(json 'j["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"]')"

# The operator's hostfile for this MPIJob (OpenMPI, slotsPerWorker 1, runLauncherAsWorker): the
# launcher first, then each worker, in the job's service domain; and the cluster's DNS for them.
launcher_host=$name-launcher.$name.ns1.svc
worker_host=$name-worker-0.$name.ns1.svc
printf '%s slots=1\n%s slots=1\n' "$launcher_host" "$worker_host" >hostfile
printf '127.0.0.1 localhost\n127.0.0.1 %s\n127.0.0.1 %s\n' "$launcher_host" "$worker_host" >hosts

# pod ROLE HOSTNAME [VAR=VALUE...]: one pod of the MPIJob, as the operator starts it.
pod() {
  local role=$1 host=$2
  shift 2
  local -a vars=(K_MPI_JOB_ROLE="$role" MASTER_PORT="$port" TRNSLURM_BATCH_HEARTBEAT=1 TRNSLURM_K8S_POLL=1)
  [ "$role" != launcher ] ||
    vars+=(OMPI_MCA_orte_default_hostfile="$work/hostfile" TRN_POD_UID="$uid" TRN_LAUNCHER_JOB_UID="$job_uid")
  unshare -m -u env -u MASTER_ADDR "${vars[@]}" "$@" bash -c \
    'mount --bind "$0" /etc/hosts && hostname "$1" && shift 2 && exec timeout 240 "$@"' \
    "$work/hosts" "$host" bash "$entry" train
}

# The launcher pod's uid and its Job's (the label the Job controller gives the pod).
job_uid=5f0c1f9e-0000-4000-8000-00000000000a
uid=0b8b6d0c-5a0e-4a39-9f3c-000000000001
rc0=0 rc1=0
pod worker "${name}-worker-0" >worker.log 2>&1 &
pid1=$!
pod launcher "${name}-launcher" >launcher.log 2>&1 &
pid0=$!
wait "$pid0" || rc0=$?
wait "$pid1" || rc1=$?
expect_eq "the launcher exits 0" 0 "$rc0" || cat launcher.log worker.log >&2
expect_eq "the worker exits 0" 0 "$rc1" || cat launcher.log worker.log >&2
expect_contains "the worker is node 1, from the hostfile" "node 1 of 2, main node at $launcher_host" "$(cat worker.log)"
for r in 0 1 2 3; do
  f=$run_dir/rendezvous/rank-$r.json
  [ -f "$f" ] || fail "rank $r wrote nothing: $(cat launcher.log worker.log)"
  out=$(cat "$f")
  expect_eq "rank $r: world" 4 "$(json 'j["world"]')"
  expect_eq "rank $r: the ranks summed over the group" 6 "$(json 'j["sum"]')"
  expect_eq "rank $r: master address, the hostfile's first host" "$launcher_host" "$(json 'j["master_addr"]')"
  expect_eq "rank $r: master port (the environment's, over the plugin's default)" "$port" "$(json 'j["master_port"]')"
  expect_eq "rank $r: torchrun's node rank is the pod's line in the hostfile" "$(json 'j["group_rank"]')" "$(json 'j["node_rank"]')"
  expect_eq "rank $r: nodes" 2 "$(json 'j["nnodes"]')"
  expect_eq "rank $r: the plugin's MALLOC_ARENA_MAX (task-env.sh)" 64 "$(json 'j["malloc_arena_max"]')"
  expect_eq "rank $r: the recipe's stage env, as srun passes it" train "$(json 'j["recipe_env"]')"
done
out=$(cat "$run_dir"/rendezvous/rank-*.json | /usr/bin/python3 -c 'import json,sys; print(json.dumps(sorted({json.loads(l)["group_rank"] for l in sys.stdin.read().replace("}{", "}\n{").splitlines()})))')
expect_eq "workers on both pods" "[0, 1]" "$out"

# A new launcher pod whose worker never comes (its node lost): the launcher ends the step and
# exits 75, which the Job's backoffLimit retries; nothing is recorded as the stage's failure.
uid=0b8b6d0c-5a0e-4a39-9f3c-000000000002
rc0=0
pod launcher "${name}-launcher" TRNSLURM_BATCH_START_TIMEOUT=3 >lost.log 2>&1 || rc0=$?
expect_eq "a lost worker: the launcher exits 75 (retried)" 75 "$rc0" || cat lost.log >&2
expect_contains "and says which node" "node 1 stopped answering" "$(cat lost.log)"
[ ! -e "$run_dir/k8s/jobs/train/failed" ] || fail "a lost node was recorded as the stage's own failure"

# A worker pod started again within an attempt (its container restarted, or the operator
# created it again): its node was in the attempt before (alive.1 is there), so the steps it ran
# are gone. It says so and ends the step: the launcher exits 75. The launcher the Job starts next
# is a new attempt, which the same worker joins, and the stage succeeds.
uid=0b8b6d0c-5a0e-4a39-9f3c-000000000005
rc0=0 rc1=0
rm -rf "$run_dir/rendezvous"
pod launcher "${name}-launcher" >restart1.log 2>&1 &
pid0=$!
for _ in $(seq 100); do
  [ "$(cat "$run_dir/k8s/jobs/train/current" 2>/dev/null)" != "$uid" ] || break
  sleep 0.2
done
expect_eq "the launcher names its attempt" "$uid" "$(cat "$run_dir/k8s/jobs/train/current")"
touch "$run_dir/k8s/steps/$uid/alive.1"
pod worker "${name}-worker-0" >restart-worker.log 2>&1 &
pid1=$!
wait "$pid0" || rc0=$?
expect_eq "a worker back in its attempt: the launcher exits 75 (retried)" 75 "$rc0" || cat restart1.log restart-worker.log >&2
expect_contains "the worker says why" "node 1 was in attempt $uid before" "$(cat restart-worker.log)"
uid=0b8b6d0c-5a0e-4a39-9f3c-000000000006
rc0=0
pod launcher "${name}-launcher" >restart2.log 2>&1 || rc0=$?
wait "$pid1" || rc1=$?
expect_eq "the next attempt succeeds" 0 "$rc0" || cat restart2.log restart-worker.log >&2
expect_eq "with the same worker, which then exits 0" 0 "$rc1"
expect_contains "the worker joined the new attempt" "attempt $uid, node 1 of 2" "$(cat restart-worker.log)"
expect_eq "four ranks again" 4 "$(find "$run_dir/rendezvous" -name 'rank-*.json' | wc -l)"

# The stage's own failure (exit 3 on every node): recorded; the next launcher pod of the Job
# exits 3 at once, without running the stage.
uid=0b8b6d0c-5a0e-4a39-9f3c-000000000003
rc0=0 rc1=0
pod worker "${name}-worker-0" >worker3.log 2>&1 &
pid1=$!
pod launcher "${name}-launcher" TRN_PROBE_FAIL=1 >fail.log 2>&1 || rc0=$?
wait "$pid1" || rc1=$?
expect_eq "the stage's own failure: its status" 3 "$rc0" || cat fail.log worker3.log >&2
expect_eq "the worker of a failed stage exits 0 (the launcher's status is the job's)" 0 "$rc1" || cat worker3.log >&2
uid=0b8b6d0c-5a0e-4a39-9f3c-000000000004
rc0=0
pod launcher "${name}-launcher" >again.log 2>&1 || rc0=$?
expect_eq "a launcher started again after it exits 3 at once" 3 "$rc0"
expect_contains "and says why" "failed before (exit 3)" "$(cat again.log)"
[ ! -d "$run_dir/k8s/steps/${uid//-/}" ] && [ ! -d "$run_dir/k8s/steps/$uid" ] || fail "the stage ran again"

# A new MPIJob for the stage (deleted and applied again: a new launcher Job) runs it again; its
# worker does not join the attempts that have ended.
job_uid=5f0c1f9e-0000-4000-8000-00000000000b
uid=0b8b6d0c-5a0e-4a39-9f3c-000000000007
rc0=0 rc1=0
pod worker "${name}-worker-0" >worker7.log 2>&1 &
pid1=$!
pod launcher "${name}-launcher" TRN_PROBE_QUICK=1 >new-job.log 2>&1 || rc0=$?
wait "$pid1" || rc1=$?
expect_eq "a new MPIJob runs the stage again" 0 "$rc0" || cat new-job.log worker7.log >&2
expect_eq "with its worker" 0 "$rc1"
expect_contains "which joined the new attempt only" "attempt $uid, node 1 of 2" "$(cat worker7.log)"
expect_eq "the step ran on both pods" "0 0" "$(cat "$run_dir/k8s/steps/$uid/1.0.rc" "$run_dir/k8s/steps/$uid/1.1.rc" | paste -sd' ')"
finish
