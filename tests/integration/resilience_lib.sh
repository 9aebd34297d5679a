# Shared by the test_resilience_*.sh tests (source after lib.sh and chain_lib.sh): the recipe of
# tests/fixtures/resilience/resilience.toml as ./trnslurm.toml (tiny-cpu's upstream stages, run by
# the CPU stand-ins) and its inputs: a dataset of 3000 tokens (23 optimizer steps on 2 nodes x 2
# workers), the model config and the pretrained weights.
# shellcheck disable=SC2034,SC2154  # work, trn (lib.sh) in; dev_cluster: for the tests that source this file
cp "$TRNSLURM_SOURCE_DIR/tests/fixtures/resilience/resilience.toml" "$work/trnslurm.toml"
py=/usr/bin/python3
dev_cluster=$TRNSLURM_SOURCE_DIR/scripts/dev-cluster
"$py" "$TRNSLURM_SOURCE_DIR/scripts/cpu/make_nxd_inputs.py" --recipe trnslurm.toml --tokens 3000 >/dev/null

trap cancel_chain EXIT  # chain_lib.sh

# The job id of a chain's stage, from its manifest (status exits 3 while the chain runs).
stage_job() {  # CHAIN STAGE
  { "$trn" status "$1" --json || true; } | "$py" -c 'import json,sys; print(next(s["job_id"] for s in json.load(sys.stdin)["stages"] if s["stage"] == sys.argv[1]))' "$2"
}

# How many times a stage's upstream script started: the "start" events of the stand-ins' log
# ({{run_dir}}/<stage>.jsonl; none when the stage never ran).
stage_runs() {  # RUN_DIR STAGE
  if [ -f "$1/$2.jsonl" ]; then grep -c '"event": "start"' "$1/$2.jsonl" || true; else echo 0; fi
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

# The same recipe as one more chain, never interrupted and not slowed down, into checkpoint and
# export directories of its own; then compares the full checkpoint it exports with the one
# chain RUN_DIR exported, tensor by tensor. Prints "equal" or what differs.
compare_with_uninterrupted() {  # RUN_DIR
  local out rc ref verdict
  capture "$trn" submit --set checkpoint.dir=reference --set checkpoint.export_dir=reference-export \
    --set stages.train.env.TRNSLURM_STANDIN_STEP_DELAY=0
  [ "$rc" = 0 ] || fail "the reference chain was not submitted: $out"
  ref=$(chain_of "$out")
  verdict=$(wait_chain "$ref" 180)
  [ "$verdict" = 0 ] || fail "the reference chain failed: $("$trn" status "$ref" 2>&1)"
  "$py" - "$(stage_export "$1" convert_back TRNSLURM_EXPORT_DIR)" \
    "$(stage_export "$(run_of "$out")" convert_back TRNSLURM_EXPORT_DIR)" <<'PY'
import sys
import torch
a, b = (torch.load(f"{d}/checkpoint.pt", map_location="cpu") for d in sys.argv[1:3])
diff = [n for n in a if n not in b or not torch.equal(a[n], b[n])]
print("equal" if a and not diff and a.keys() == b.keys() else f"tensors differ: {diff[:5] or sorted(set(a) ^ set(b))[:5]}")
PY
}
