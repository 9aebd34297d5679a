# Every bundled Neuron recipe's own four stages, run for real on the two-node cluster: the rendered
# commands of the recipe as shipped, scaled down with --set (a tiny model, CPU nodes, a small
# dataset, TP 2 and PP 2 where the recipe pipelines) and pointed at the CPU stand-ins of
# neuronx-distributed 2.28's scripts (upstream.root, upstream.venv: where the scripts are found,
# the one thing that differs). The stand-ins parse as upstream does, and with
# TRNSLURM_STANDIN_STRICT a flag a lenient script would silently ignore fails the stage too.
# All chains are submitted at once and run side by side; as every node of this cluster shares the
# loopback address, each chain gets a rendezvous port of its own (MASTER_PORT in the stage's
# environment wins over the plugin's site-wide one, docs/plugin.md).
source "$(dirname "$0")/lib.sh"
T=${TRNSLURM_BIN:?}
py=/usr/bin/python3
cpu=$TRNSLURM_SOURCE_DIR/scripts/cpu
cd "$work"

# 48 rows of 32 tokens: 12 optimizer steps of gbs 4.
"$py" "$cpu/make_nxd_inputs.py" --dataset data/dataset --model_config data/config --pretrained data/pretrained.pt \
  --tokens 1600 --layers 2 --hidden 64 --heads 4 --kv-heads 2 --intermediate 128 --seq-len 32 >/dev/null

export TRNSLURM_STANDIN_STRICT=1 GLOO_SOCKET_IFNAME=lo
# The legacy track's Llama recipes (the TorchTitan ones have their own test).
recipes=$("$T" recipes | awk '$1 ~ /^llama/ && $2 == "legacy" {print $1}')
expect_eq "the NxD recipes: those of recipes/" \
  "$(cd "$TRNSLURM_SOURCE_DIR/recipes" && grep -l '^package = "neuronx-distributed"' llama*.toml | sed 's/\.toml$//' | sort)" \
  "$(sort <<<"$recipes")"
declare -A chain
port=$((${TRNSLURM_PORT_BASE:?} + 60))
for r in $recipes; do
  port=$((port + 1))
  mkdir "$r"
  (cd "$r" && "$T" init "$r" >/dev/null)
  pp=1
  grep -q '^pp = 1$' "$r/trnslurm.toml" || pp=2
  sets=(--set cluster.instance=cpu --set cluster.cores_per_node=2 --set cluster.nodes=2 --set cluster.lnc=1
    --set model.layers=2 --set model.hidden=64 --set model.heads=4 --set model.kv_heads=2
    --set model.ffn_hidden=128 --set model.vocab=256 --set model.seq_len=32
    --set "model.pretrained=$work/data/pretrained.pt" --set "model.config=$work/data/config"
    --set train.tp=2 --set "train.pp=$pp" --set train.gbs=4 --set train.mbs=1 --set train.warmup_steps=2
    --set "dataset.path=$work/data/dataset" --set dataset.format=hf
    --set "checkpoint.dir=$work/$r/ckpt" --set "checkpoint.export_dir=$work/$r/export" --set checkpoint.every=4
    --set "upstream.root=$cpu/neuronx-distributed" --set "upstream.venv=$cpu/neuron-venv"
    --set slurm.exclusive=false --set "stages.train.env.MASTER_PORT=$port")
  (cd "$r" && "$T" plan "${sets[@]}" --json >plan.json && "$T" submit "${sets[@]}" >submit.out) ||
    fail "$r: plan or submit failed: $(cat "$r/submit.out" 2>/dev/null)"
  chain[$r]=$(sed -n 's/^chain \([^ ]*\).*/\1/p' "$r/submit.out")
done

for r in $recipes; do
  set +e
  (cd "$r" && timeout 600 "$T" watch "${chain[$r]}" >watch.out 2>&1)
  rc=$?
  set -e
  if [ "$rc" != 0 ]; then
    for log in "$r"/runs/*/logs/*.out; do printf '== %s\n' "$log"; tail -n 15 "$log"; done >&2
    fail "$r: the chain did not succeed (watch exit $rc): $(cat "$r/watch.out")"
  fi
  out=$(cat "$r/plan.json")
  total=$(json "j['total_steps']")
  ckpt=$r/ckpt/${chain[$r]}  # each chain's own directory under checkpoint.dir (docs/recipe.md)
  newest=$(find "$ckpt" -mindepth 2 -maxdepth 2 -name 'done' -path '*/step_*' -printf '%h\n' | sed 's|.*/step_||' | sort -n | tail -n 1)
  expect_eq "$r: newest checkpoint is the plan's last step" "$total" "$newest"
  [ -f "$ckpt/pretrained_weight/model/dp_rank_00_tp_rank_01_pp_rank_00.pt" ] ||
    fail "$r: convert did not write the TP shards where --pretrained_weight reads them"
  [ -s "$r/export/${chain[$r]}/checkpoint.pt" ] || fail "$r: convert_back exported nothing"
  checks=$((checks + 2))
done
expect_nodes_idle "the Neuron recipes' chains"
finish
