# The legacy track's demo (scripts/demo --legacy), end to end on the real two-node cluster:
# tiny-cpu's four stages, the commands of the NxD recipes, run by the CPU stand-ins of
# neuronx-distributed's scripts. (The default demo, tiny-titan-cpu: test_titan_chain.sh.) The trainer's
# optimizer steps per epoch and in total equal the plan's, its warmup is the plan's, convert-back
# exports the newest checkpoint with the model's tensors, and torchrun used the ranks and master
# address the plugin set. Mid-train, status shows the trainer's progress; a requeue of the train
# job shows as a restart in status and in the report.
source "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
cd "$work"
T=$(trnslurm_as_test_user)  # lib.sh: the chain runs as an unprivileged user

"$T" init tiny-cpu >/dev/null
"$py" "$TRNSLURM_SOURCE_DIR/scripts/cpu/make_nxd_inputs.py" --recipe trnslurm.toml >/dev/null
# A warmup of several steps, so the trainer's learning-rate peak shows it was honoured.
"$T" plan --epochs 3 --set train.warmup_steps=5 --json >plan.json
# An ignored flag of a lenient upstream script fails the stand-in (TRNSLURM_STANDIN_STRICT). A
# step of at least 0.1 s, so that status sees the training under way.
TRNSLURM_STANDIN_STRICT=1 TRNSLURM_STANDIN_STEP_DELAY=0.1 "$T" submit --epochs 3 --set train.warmup_steps=5 >submit.out
run=$(sed -n 's/^run directory //p' submit.out)
[ -d "$run" ] || fail "no run directory in: $(cat submit.out)"
total=$("$py" -c 'import json; print(json.load(open("plan.json"))["total_steps"])')

# Mid-train, status reads the trainer's progress lines: a step between 1 and the total, an ETA.
# Past the first checkpoint the train job is requeued (a restart, as a preemption would), which
# status counts and the report marks.
mid="" requeued=""
for _ in $(seq 1200); do
  "$T" status --json >mid.json 2>/dev/null || true
  figures=$("$py" -c '
import json
j = json.load(open("mid.json")); p = j["progress"] or {}
train = [s for s in j["stages"] if s["stage"] == "train"][0]
print(j["verdict"], p.get("step"), p.get("eta_seconds"), train["job_id"])' 2>/dev/null || echo "unreadable None None None")
  read -r verdict step eta job <<<"$figures"
  [ "$verdict" = running ] || [ "$verdict" = unreadable ] || break
  if [ -z "$mid" ] && [ "$step" != None ] && [ "$step" -ge 1 ] && [ "$step" -lt "$total" ] && [ "$eta" != None ]; then
    mid="$step $eta"
  fi
  if [ -z "$requeued" ] && [ "$step" != None ] && [ "$step" -ge 15 ] && [ "$step" -lt $((total - 20)) ]; then
    scontrol requeue "$job"
    requeued=$step
  fi
  sleep 0.3
done
[ -n "$mid" ] || fail "status --json never showed a step between 1 and $total with an ETA: $(cat mid.json)"
checks=$((checks + 1))
[ -n "$requeued" ] || fail "the train job was never requeued mid-train"
checks=$((checks + 1))

set +e
timeout 600 "$T" watch >watch.out 2>&1
rc=$?
set -e
expect_eq "watch exit code (0: the chain succeeded); status: $("$T" status 2>&1)" 0 "$rc"
"$T" status --json >status.json
expect_eq "stages completed" "COMPLETED COMPLETED COMPLETED COMPLETED" \
  "$("$py" -c 'import json,sys; print(" ".join(s["state"] for s in json.load(open("status.json"))["stages"]))')"
expect_eq "final progress: the plan's total, finished, a restart" "$total True True" \
  "$("$py" -c 'import json; p = json.load(open("status.json"))["progress"]; print(p["step"], p["finished"], p["restarts"] >= 1)')"
"$T" report --json >report.json
expect_eq "report: the restart marked" "True" "$("$py" -c 'import json; print(json.load(open("report.json"))["restarts"] >= 1)')"
if [ ! -s "$run/progress.png" ] || [ ! -s "$run/progress.svg" ]; then fail "report drew no PNG and SVG in $run"; fi
checks=$((checks + 1))

# What the plugin gives a task of a two-node step on this cluster: the rendezvous torchrun must use.
master=$(srun -N 2 --ntasks-per-node=1 bash -c 'echo "$MASTER_ADDR:$MASTER_PORT"' | sort -u)

"$py" - "$run" "$master" "$work" <<'PY'
import json, sys
from pathlib import Path
import torch

run, master, work = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
plan = json.loads((work / "plan.json").read_text())
log = [json.loads(l) for l in (run / "train.jsonl").read_text().splitlines()]
failures = []
def expect(what, want, got):
    if want != got:
        failures.append(f"{what}: expected {want!r}, got {got!r}")

start = next(e for e in log if e["event"] == "start")
# An epoch cut short by the requeue ends "preempted"; the resumed run finishes it.
epochs = [e for e in log if e["event"] == "epoch_end" and not e.get("preempted")]
steps = [e for e in log if e["event"] == "step"]
expect("epochs trained", plan["epochs"], len(epochs))
expect("optimizer steps in the first epoch", plan["steps_per_epoch"], epochs[0]["step"])
expect("optimizer steps in all", plan["total_steps"], epochs[-1]["step"])
expect("last step logged", plan["total_steps"], steps[-1]["step"])
expect("micro-steps per epoch (the trainer's sampler)", plan["micro_steps_per_epoch"], start["micro_per_epoch"])
expect("the trainer's step limit (--max_steps)", plan["total_steps"], start["planned_total"])
expect("data-parallel ranks", plan["dp"], start["dp"])
expect("gradient accumulation", plan["grad_accum"], start["grad_accum"])
expect("micro-batch", plan["mbs"], start["micro_batch"])
# Warmup: the learning rate rises for warmup_steps steps, then decays. Upstream's schedule
# (transformers' get_linear_schedule_with_warmup, stepped after each optimizer step) gives step s
# the rate of s - 1 warmup steps: the peak is at step warmup_steps + 1.
lrs = [s["lr"] for s in steps]
peak = lrs.index(max(lrs)) + 1
expect("plan's warmup", 5, plan["warmup_steps"])
expect("warmup steps (the step of the peak learning rate, minus one)", plan["warmup_steps"], peak - 1)
if not steps[-1]["loss"] < steps[0]["loss"] / 2:
    failures.append(f"loss did not fall: {steps[0]['loss']} -> {steps[-1]['loss']}")

# The rendezvous: every rank used the plugin's master address and port; node ranks follow hosts.
ranks = start["ranks"]
expect("world size", plan["world_size"], len(ranks))
expect("master seen by every rank", {master}, {f"{r['MASTER_ADDR']}:{r['MASTER_PORT']}" for r in ranks})
expect("node rank of each host", {"n1": {"0"}, "n2": {"1"}},
       {h: {r["GROUP_RANK"] for r in ranks if r["hostname"] == h} for h in ("n1", "n2")})

# convert-back exported the newest completed checkpoint (the last step) as one full state dict of
# the model's tensors, trained away from the pretrained weights the convert stage read.
ckpts = sorted((int(p.name[5:]), p) for p in (work / "checkpoints" / run.name).glob("step_*") if (p / "done").exists())
expect("newest completed checkpoint", plan["total_steps"], ckpts[-1][0])
expect("TP shard files", plan["tp"], len(list((ckpts[-1][1] / "model").glob("dp_rank_00_tp_rank_*_pp_rank_00.pt"))))
pretrained = torch.load(work / "data" / "pretrained.pt")
exported = torch.load(work / "export" / run.name / "checkpoint.pt")
expect("exported tensors", sorted(pretrained), sorted(exported))
expect("exported shapes", {k: tuple(v.shape) for k, v in pretrained.items()},
       {k: tuple(v.shape) for k, v in exported.items()})
if all(torch.equal(pretrained[k], exported[k]) for k in pretrained if k in exported):
    failures.append("the exported weights are the pretrained ones: training or convert-back lost")
for f in failures:
    print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
PY
checks=$((checks + 1))  # the Python block above: exits non-zero on any failed expectation
expect_nodes_idle "the demo chain"
finish
