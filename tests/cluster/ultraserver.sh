# A cluster of its own, four nodes of a type no bundled table knows, in two UltraServers of two
# (node features us1, us2; docs/instances.md): the site's instances file named on the plugstack
# line is honoured by the plugin and by plan without a rebuild, a bad one fails the job and never
# the node, and the UltraServer constraint plan renders keeps a job inside one UltraServer.
set -euo pipefail
: "${TRNSLURM_SOURCE_DIR:?run through ctest}" "${TRNSLURM_BIN:?}" "${TRNSLURM_CLUSTER_DIR:?}"
source "$TRNSLURM_SOURCE_DIR/tests/lib/checks.sh"
dc=$TRNSLURM_SOURCE_DIR/scripts/dev-cluster
fixtures=$TRNSLURM_SOURCE_DIR/tests/fixtures

# The site's file: a copy the test edits between steps (the plugin reads it in every step).
cp "$fixtures/instances/site.toml" "$work/site.toml"
chmod 644 "$work/site.toml"
trap '"$dc" down >/dev/null 2>&1 || true' EXIT
"$dc" up --nodes 4 --features "us1 us1 us2 us2" --plugstack-args \
  "root=$fixtures/neuron/ultra/%n state_dir=$TRNSLURM_CLUSTER_DIR/spool/%n/trnslurm instances=$work/site.toml"
eval "$("$dc" env)"

# The nodes report trnx.12xlarge (4 devices x 8 cores), which only the site's file defines: LNC 1
# by its lnc_default, told to the runtime because the type accepts 1 or 2.
out=$(srun -N 1 -w n1 --trn-verbose bash -c 'echo "LNC=$NEURON_LOGICAL_NC_CONFIG CORES=$NEURON_RT_NUM_CORES"' 2>"$work/err")
expect_eq "the site's type, default LNC" "LNC=1 CORES=32" "$out"
expect_contains "the reason names the site's type" "default for trnx.12xlarge (site)" "$(cat "$work/err")"

# Edited in place, honoured by the next step: no rebuild, no restart.
sed -i 's/^lnc = \[1, 2\]/lnc = [2]/; s/^lnc_default = 1/lnc_default = 2/' "$work/site.toml"
out=$(srun -N 2 -w n1,n2 --ntasks-per-node=2 bash -c 'echo "$SLURMD_NODENAME $NEURON_LOGICAL_NC_CONFIG $NEURON_RT_VISIBLE_CORES"' | sort)
expect_eq "LNC 2 from the edited file, cores per task" "n1 2 0-7
n1 2 8-15
n2 2 0-7
n2 2 8-15" "$out"
set +e
msg=$(srun -N 1 -w n3 --export=ALL,NEURON_LOGICAL_NC_CONFIG=1 true 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "an LNC the site's type does not accept ran"
checks=$((checks + 1))
expect_contains "the refusal names the type" "on a trnx.12xlarge (site) node, which supports only LNC=2" "$msg"

# A broken definition fails the job with its position, and leaves every node in service.
printf '[instances."trnx.12xlarge"]\ntarget = "trn3"\ndevices = "4"\n' >"$work/site.toml"
set +e
msg=$(srun -N 2 true 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a step ran with a broken site file"
checks=$((checks + 1))
expect_contains "the error names the file and position" "$work/site.toml:3:11: instances.\"trnx.12xlarge\".devices must be a whole number" "$msg"
sleep 1
expect_eq "no node drained by a bad site file" "idle" "$(sinfo -h -N -o %t | sort -u | tr '\n' ' ' | sed 's/ $//')"
cp "$fixtures/instances/site.toml" "$work/site.toml"

# plan reads the same file (through this cluster's plugstack.conf) and renders the request that
# keeps each TP x PP group in one UltraServer: TP 16 x PP 2 at LNC 2 spans two 16-core servers.
cd "$work"
"$TRNSLURM_BIN" init llama3-8b-trn2 >/dev/null
plan=$("$TRNSLURM_BIN" plan --samples 100000 --set cluster.instance=trnx.12xlarge --set cluster.lnc=2 \
  --set cluster.nodes=2 --set train.tp=16 --set train.pp=2 --set 'slurm.ultraserver_features=["us*"]' --json)
constraint=$(printf '%s' "$plan" | /usr/bin/python3 -c 'import json,sys; p=json.load(sys.stdin)["placement"]
print(p["method"], *p["sbatch_args"])')
expect_eq "plan: the prefix expanded from the cluster's features" "constraint --constraint=[us1|us2]" "$constraint"
dry=$("$TRNSLURM_BIN" submit --dry-run --samples 100000 --set cluster.instance=trnx.12xlarge --set cluster.lnc=2 \
  --set cluster.nodes=2 --set train.tp=16 --set train.pp=2 --set 'slurm.ultraserver_features=["us*"]' --json)
expect_eq "submit: the constraint on the two-node stages only" "convert 0
precompile 1
train 1
convert_back 0" "$(printf '%s' "$dry" | /usr/bin/python3 -c 'import json,sys
for s in json.load(sys.stdin)["stages"]: print(s["stage"], int("--constraint=[us1|us2]" in s["sbatch_argv"]))')"

# Honoured by the scheduler: with n2 (us1) and n3 (us2) busy, two free nodes remain, one in each
# UltraServer. Without the constraint Slurm would use them; with it the job waits for a whole one.
blockers=()
for n in n2 n3; do
  blockers+=("$(sbatch --parsable --exclusive -w "$n" -o /dev/null --wrap 'sleep 600')")
done
deadline=$((SECONDS + 30))
until [ "$(squeue -h -j "$(IFS=,; echo "${blockers[*]}")" -t running | wc -l)" = 2 ]; do
  [ $SECONDS -lt $deadline ] || fail "the blocking jobs did not start"
  sleep 0.2
done
would=$(sbatch --test-only -N 2 --exclusive --wrap true 2>&1)
expect_contains "unconstrained, Slurm would span both UltraServers" "on nodes n[1,4]" "$would"
job=$(sbatch --parsable -N 2 --exclusive "${constraint#constraint }" -o "$work/job.out" --wrap 'srun hostname')
deadline=$((SECONDS + 30))
until [ -n "$(squeue -h -j "$job" -o %r | grep -v '^None$')" ]; do
  [ $SECONDS -lt $deadline ] || fail "the scheduler did not consider job $job"
  sleep 0.2
done
expect_eq "the constrained job waits rather than span two UltraServers" "PENDING" "$(squeue -h -j "$job" -o %T)"
expect_eq "while one node of each UltraServer is idle" "idle idle" "$(sinfo -h -N -n n1,n4 -o %t | tr '\n' ' ' | sed 's/ $//')"
scancel "${blockers[1]}"  # n3 free: us2 is whole again
deadline=$((SECONDS + 60))
until [ -z "$(squeue -h -j "$job" -t pending,running,configuring,completing -o %i 2>/dev/null)" ]; do
  [ $SECONDS -lt $deadline ] || fail "job $job did not finish"
  sleep 0.2
done
expect_eq "it ran inside us2" "n3
n4" "$(sort "$work/job.out")"
scancel "${blockers[0]}"
finish
