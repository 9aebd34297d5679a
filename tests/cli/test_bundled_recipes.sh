# Every bundled recipe plans, renders its whole chain with `submit --dry-run`, and every rendered
# job script passes shellcheck. No Slurm needed: a dry run submits nothing.
source "$(dirname "$0")/lib.sh"
cd "$work"
names=$("$TRNSLURM_BIN" recipes | awk '{print $1}')
expect_eq "bundled recipes" 8 "$(wc -w <<<"$names")"
for name in $names; do
  mkdir "$name"
  (
    cd "$name"
    "$TRNSLURM_BIN" init "$name" >/dev/null
    "$TRNSLURM_BIN" plan --samples 2000000 --json >plan.json
    "$TRNSLURM_BIN" submit --dry-run --samples 2000000 >dry-run.out
  ) || fail "$name: plan or dry run failed"
  scripts=("$name"/runs/*/*.sh)
  expect_eq "$name: rendered stages" 4 "${#scripts[@]}"
  shellcheck -s bash "${scripts[@]}" || fail "$name: shellcheck found problems in the rendered scripts"
  checks=$((checks + 1))
  total=$(sed -n 's/^  "total_steps": \([0-9]*\),$/\1/p' "$name/plan.json")
  expect_eq "$name: the train script carries the plan's total" "export TRNSLURM_TOTAL_STEPS='$total'" \
    "$(grep -x "export TRNSLURM_TOTAL_STEPS=.*" "$name"/runs/*/train.sh)"
done
finish
