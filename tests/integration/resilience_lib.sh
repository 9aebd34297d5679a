# Shared by the test_resilience_*.sh tests (source after lib.sh and chain_lib.sh): the CPU
# backend's recipe (tests/fixtures/resilience/resilience.toml) as ./trnslurm.toml, a tiny
# dataset (3000 tokens: 23 optimizer steps on 2 nodes x 2 workers) and its initial checkpoint.
# shellcheck disable=SC2034,SC2154  # work, trn (lib.sh) in; dev_cluster: for the tests that source this file
cp "$TRNSLURM_SOURCE_DIR/tests/fixtures/resilience/resilience.toml" "$work/trnslurm.toml"
export TRN_CPU=$TRNSLURM_SOURCE_DIR/scripts/cpu
py=/usr/bin/python3
dev_cluster=$TRNSLURM_SOURCE_DIR/scripts/dev-cluster
"$py" "$TRN_CPU/make_demo_data.py" --dataset data/tok --checkpoint init --tokens 3000 --seq-len 16 \
  --intermediate 128 >/dev/null

# A test that fails half-way must not leave its chain running into the next test (the workers'
# MASTER_PORT is the same for every job).
cancel_chain() { [ -z "${chain:-}" ] || "$trn" cancel "$chain" >/dev/null 2>&1 || true; }
trap cancel_chain EXIT

# The job id of a chain's stage, from its manifest (status exits 3 while the chain runs).
stage_job() {  # CHAIN STAGE
  { "$trn" status "$1" --json || true; } | "$py" -c 'import json,sys; print(next(s["job_id"] for s in json.load(sys.stdin)["stages"] if s["stage"] == sys.argv[1]))' "$2"
}

# Waits until a completed checkpoint step_N/done exists (LIMIT seconds at most).
wait_checkpoint() {  # DIR N LIMIT
  local deadline=$((SECONDS + $3))
  until [ -e "$1/step_$2/done" ]; do
    [ $SECONDS -lt $deadline ] || fail "no checkpoint step_$2 in $1 after $3 s"
    sleep 0.5
  done
}

# Steps trained again after a restart: for each "start" with resumed_from R in the trainer's
# log, the highest step logged before it minus R. Prints the largest.
redone_steps() {  # TRAIN_LOG
  "$py" - "$1" <<'PY'
import json, sys
last, worst = 0, 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "start" and e.get("resumed_from") is not None:
        worst = max(worst, last - e["resumed_from"])
    if e["event"] == "step":
        last = max(last, e["step"])
print(worst)
PY
}

# The same training without Slurm, uninterrupted (torchrun --standalone, 4 workers as 2 nodes x 2),
# into DIR; then compares the newest checkpoint of DIR with that of OTHER tensor by tensor.
# Prints "equal" or what differs.
compare_with_uninterrupted() {  # OTHER DIR
  local plan
  plan=$("$trn" plan --json)
  local steps warmup acc
  steps=$("$py" -c 'import json,sys; print(json.load(sys.stdin)["total_steps"])' <<<"$plan")
  warmup=$("$py" -c 'import json,sys; print(json.load(sys.stdin)["warmup_steps"])' <<<"$plan")
  acc=$("$py" -c 'import json,sys; print(json.load(sys.stdin)["grad_accum"])' <<<"$plan")
  # Not --standalone (always localhost:29400, shared by every checkout's tests): a port of ours.
  GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 "$py" "$TRN_CPU/torchrun.py" --nnodes 1 --node_rank 0 \
    --master_addr 127.0.0.1 --master_port $((TRNSLURM_PORT_BASE + 50)) --nproc_per_node 4 \
    "$TRN_CPU/train.py" --data data/tok --init_dir converted --checkpoint_dir "$2" --checkpoint_every 4 --tp 1 \
    --mbs 1 --gbs 8 --grad_accum "$acc" --epochs 1 --total_steps "$steps" --warmup_steps "$warmup" --lr 3e-3 \
    >"$work/reference.out" 2>&1 || fail "reference run failed: $(tail -5 "$work/reference.out")"
  PYTHONPATH=$TRN_CPU "$py" - "$1" "$2" <<'PY'
import sys
from pathlib import Path
import torch
import checkpoints, sharding
a, b = checkpoints.newest(Path(sys.argv[1])), checkpoints.newest(Path(sys.argv[2]))
if a[0] != b[0]:
    print(f"newest steps differ: {a[0]} and {b[0]}")
    sys.exit(0)
wa, wb = sharding.load_shards(a[1] / "model"), sharding.load_shards(b[1] / "model")
diff = [n for n in wa if not torch.equal(wa[n], wb[n])]
print("equal" if not diff and wa.keys() == wb.keys() else f"tensors differ: {diff[:5]}")
PY
}
