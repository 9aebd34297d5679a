# Every bundled recipe plans, renders its whole chain with `submit --dry-run`, and every rendered
# job script passes shellcheck. No Slurm needed: a dry run submits nothing. A Neuron recipe whose
# upstream scripts are not where [upstream] root says: init says what to fetch, the dry run warns,
# submit refuses with exit 2 before anything is submitted (no sbatch on PATH here: none is run).
source "$(dirname "$0")/lib.sh"
cd "$work"
names=$("$TRNSLURM_BIN" recipes | awk '{print $1}')
expect_eq "bundled recipes: those of recipes/" "$(source_recipe_names)" "$(sort <<<"$names")"
for name in $names; do
  mkdir "$name"
  (
    cd "$name"
    "$TRNSLURM_BIN" init "$name" >init.out
    "$TRNSLURM_BIN" plan --samples 2000000 --json >plan.json
    "$TRNSLURM_BIN" submit --dry-run --samples 2000000 >dry-run.out 2>dry-run.err
  ) || fail "$name: plan or dry run failed"
  track=$("$TRNSLURM_BIN" recipes | awk -v n="$name" '$1 == n {print $2}')
  if [ "$track" = current ]; then
    expect_contains "$name: init says the track and its release" "current track: TorchTitan Neuron" "$(cat "$name/init.out")"
  else
    expect_contains "$name: init says the track and the last release that supports it" \
      "legacy track: neuronx-distributed on PyTorch/XLA, supported up to Neuron 2.28" "$(cat "$name/init.out")"
  fi
  if [ "$name" != tiny-cpu ] && [ "$track" = legacy ]; then
    expect_contains "$name: init names the upstream commit" "at commit 22cadad34418fb8b5939bd8cdfc7a376eede9981" \
      "$(cat "$name/init.out")"
    expect_contains "$name: the dry run warns of the missing script" "which is not there" "$(cat "$name/dry-run.err")"
    run submit -r "$name/trnslurm.toml" --samples 2000000 --runs-dir "$work/$name/refused"
    expect_eq "$name: submit without the upstream scripts exits 2" 2 "$rc"
    expect_contains "$name: and says where to get them" "clone https://github.com/aws-neuron/neuronx-distributed" "$err"
    [ ! -e "$work/$name/refused" ] || fail "$name: a refused submit left a runs directory"
  fi
  scripts=("$name"/runs/*/*.sh)
  # Every enabled stage; an eager TorchTitan recipe's precompile is left out even when it is not
  # disabled (no --compile.backend neuron: nothing to compile ahead, docs/chain.md).
  stages=$((4 - $(grep -c '^enabled = false$' "$name/trnslurm.toml" || true)))
  if [ "$track" = current ] && [ "$stages" = 4 ] && ! grep -v '^#' "$name/trnslurm.toml" | grep -q -- '--compile.backend neuron'; then
    stages=3
  fi
  expect_eq "$name: rendered stages" "$stages" "${#scripts[@]}"
  shellcheck -s bash "${scripts[@]}" || fail "$name: shellcheck found problems in the rendered scripts"
  checks=$((checks + 1))
  total=$(sed -n 's/^  "total_steps": \([0-9]*\),$/\1/p' "$name/plan.json")
  expect_eq "$name: the train script carries the plan's total" "export TRNSLURM_TOTAL_STEPS='$total'" \
    "$(grep -x "export TRNSLURM_TOTAL_STEPS=.*" "$name"/runs/*/train.sh)"
done
finish
