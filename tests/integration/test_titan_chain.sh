#!/usr/bin/env bash
# The current track end to end (recipes/tiny-titan-cpu.toml: the stages of the bundled TorchTitan
# Neuron recipes, run by the CPU stand-in of the fork) on the 2-node dev cluster: the chain's
# first job counts the corpus's tokens with the trainer's tokenizer on a compute node, the train
# job takes its steps from that count (`trnslurm steps`), moves the checkpoint folder trnslurm
# made aside so the converted weights are loaded (the initial-load trap the stand-in reproduces),
# runs torchrun once per node (--trn-launch=torchrun), loses n2 to a hard kill after its first
# checkpoint, resumes from the newest complete step-N, and the chain exports a Hugging Face
# checkpoint with config.json and the tokenizer. See docs/chain.md, "TorchTitan Neuron".
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"
py=/usr/bin/python3
dev_cluster=$TRNSLURM_SOURCE_DIR/scripts/dev-cluster
revive() { "$dev_cluster" revive-node n2 >/dev/null 2>&1 || true; }
trap 'cancel_chain; revive' EXIT
json_of() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

cp "$TRNSLURM_SOURCE_DIR/recipes/tiny-titan-cpu.toml" trnslurm.toml
"$TRNSLURM_SOURCE_DIR/scripts/cpu/torchtitan-venv/bin/python3" "$TRNSLURM_SOURCE_DIR/scripts/cpu/make_titan_inputs.py" data --model llama3 --flavor tiny --docs 40 >/dev/null
chmod -R a+rwX "$work"

# Before the count, the plan's steps are an estimate and say so.
capture "$trn" plan
expect_eq "plan exit code" 0 "$rc"
expect_contains "the plan labels its estimate" "estimate" "$out"

# submit asks the installed trainer (its --help, on a compute node) before anything is queued: one
# that lacks a flag of the train stage (the stand-in reading a record without
# checkpoint.last_save_model_only, as a newer release might) refuses the submission, naming it.
"$py" - "$TRNSLURM_SOURCE_DIR/interfaces/torchtitan-neuron-2.33.json" narrowed.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["scripts"]["torchtitan/train.py"]
s["flags"] = [f for f in s["flags"] if f["dest"] != "checkpoint.last_save_model_only"]
json.dump(r, open(sys.argv[2], "w"))
PY
chmod a+r narrowed.json
TRNSLURM_TORCHTITAN_RECORD=$work/narrowed.json capture "$trn" submit
expect_eq "submit refused by the installed trainer (exit code)" 2 "$rc"
expect_contains "the refusal names the flag" "lists none of --checkpoint.no_last_save_model_only" "$out"
left=$(find runs -mindepth 1 -maxdepth 1 ! -name token-counts 2>/dev/null || true)
# (The trainer's --help ran as a job of its own, which may still be completing: only a chain's count.)
queued=$(squeue -h -o %j | grep '^trn-' || true)
[ -z "$queued" ] && [ -z "$left" ] || fail "a refused submit queued $queued or left $left"
checks=$((checks + 1))
# A chain without the train stage does not ask: --only convert goes in (held, then cancelled).
TRNSLURM_TORCHTITAN_RECORD=$work/narrowed.json capture "$trn" submit --only convert --sbatch-arg=--hold
expect_eq "submit --only convert beside that trainer (exit code)" 0 "$rc"
"$trn" cancel "$(chain_of "$out")" >/dev/null

capture "$trn" submit --set stages.train.env.TRNSLURM_STANDIN_STEP_DELAY=0.5
expect_eq "submit exit code" 0 "$rc"
chain=$(chain_of "$out")
run=$(run_of "$out")
[ -n "$chain" ] && [ -d "$run" ] || fail "no chain or run directory in: $out"
checks=$((checks + 1))
train_sh=$(cat "$run/train.sh")
expect_contains "train runs one torchrun per node, marked for the plugin" "--trn-launch=torchrun" "$train_sh"
expect_contains "train runs the trainer as a module" "-m torchtitan.train" "$train_sh"
expect_contains "train takes its steps from the count" "steps --run-dir" "$train_sh"
[ ! -e "$run/precompile.sh" ] || fail "an eager configuration got a precompile job"
checks=$((checks + 1))

# n2 is killed once the checkpoint of step 4 is complete (.metadata written) and training goes on.
ckpt=$(stage_export "$run" train TRNSLURM_CHECKPOINT_DIR)
# Meanwhile status reads TorchTitan's step line (colours, [rankN]: prefixes): loss and tokens/s.
deadline=$((SECONDS + 150)) training=""
until [ -e "$ckpt/step-4/.metadata" ]; do
  capture "$trn" status "$chain"
  [ "$rc" = 3 ] || fail "the chain ended (status exit $rc) before a complete step-4: $out"
  [ $SECONDS -lt $deadline ] || fail "no complete step-4 in $ckpt after 150 s: $out"
  if [[ $out == *", loss "*tokens/s* ]]; then training=$out; fi
  sleep 0.5
done
[ -n "$training" ] || fail "status never showed a step with its loss and tokens/s before step 4: $out"
checks=$((checks + 1))
"$dev_cluster" kill-node n2
deadline=$((SECONDS + 90))
until sinfo -h -n n2 -o %t | grep -q down; do
  [ $SECONDS -lt $deadline ] || fail "n2 not DOWN after 90 s: $(sinfo -h -n n2 -o %t)"
  sleep 1
done
"$dev_cluster" revive-node n2
expect_eq "chain verdict (status exit code)" 0 "$(wait_chain "$chain" 200)"

# The count: cached per corpus and tokenizer, and the plan the train job made from it.
count_file=$(json_of "$run/plan.json" 'd["token_count_file"]')
expect_eq "the plan's source after the train job" counted "$(json_of "$run/plan.json" 'd["dataset_source"]')"
expect_eq "the plan's tokens are the count's" "$(json_of "$count_file" 'd["tokens"]')" \
  "$(json_of "$run/plan.json" 'd["tokens"]')"
starts=$(grep '"event": "start"' "$run/train.jsonl")
total=$(json_of "$run/plan.json" 'd["total_steps"]')
expect_eq "the trainer's steps, at its start and at its resume: the plan's" "$total $total" \
  "$("$py" -c 'import json,sys; print(*(json.loads(l)["steps"] for l in sys.stdin))' <<<"$starts")"
# The guard, then the resume: the first start loaded the converted weights, the second step-N.
train_log=$(cat "$run"/logs/train-*.out)
expect_contains "the incomplete folder was moved aside" "moved aside" "$train_log"
expect_contains "the first start loaded the converted weights" "Loading the checkpoint from $(stage_export "$run" train TRNSLURM_CONVERTED_DIR)" "$train_log"
resumed=$("$py" -c 'import json,sys; s=[json.loads(l) for l in sys.stdin]; print(len(s), s[-1].get("resumed_from"))' <<<"$starts")
read -r attempts from <<<"$resumed"
expect_eq "train attempts" 2 "$attempts"
[ "$from" -ge 4 ] 2>/dev/null || fail "the restart resumed from '$from', not from step 4 or later"
checks=$((checks + 1))
# A Hugging Face checkpoint: weights, config.json, the tokenizer.
export_dir=$(stage_export "$run" convert_back TRNSLURM_EXPORT_DIR)
for f in model.safetensors.index.json config.json tokenizer.json tokenizer_config.json; do
  [ -s "$export_dir/$f" ] || fail "the export has no $f: $(ls "$export_dir")"
  checks=$((checks + 1))
done
# Progress read from TorchTitan's step line: the last step, its loss, the job's tokens/s (tps x
# world size), the restart.
capture "$trn" status "$chain"
expect_contains "status shows the restart" "restart 1" "$out"
expect_contains "status says why there is no precompile" "precompile none: an eager configuration" "$out"
"$trn" status "$chain" --json >status.json
expect_eq "final progress: the plan's total, a loss, tokens/s, a restart" \
  "$total True True True" \
  "$(json_of status.json 'd["progress"]["step"], d["progress"]["loss"] > 0, d["progress"]["tokens_per_second"] > 0, d["progress"]["restarts"] >= 1')"
expect_nodes_idle "the TorchTitan chain test"
finish
