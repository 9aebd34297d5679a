# --json of recipes, submit --dry-run, list, env and doctor: valid JSON, the same facts as the text form, the same
# exit code. (plan --json is in test_plan.sh; status --json and a real submit --json in the integration tests.)
source "$(dirname "$0")/lib.sh"
cd "$work"
export SLURM_CONF=$work/no-slurm.conf

run recipes
text=$out
names=$(printf '%s\n' "$text" | cut -d' ' -f1)
run recipes --json
expect_eq "recipes --json exit" 0 "$rc"
expect_eq "recipes --json names" "$names" "$(json '"\n".join(r["name"] for r in j)')"
summary=$(json '[r["summary"] for r in j if r["name"] == "tiny-cpu"][0]')
[ -n "$summary" ] || fail "recipes --json: tiny-cpu has no summary"
expect_contains "recipes --json summary is the text listing's" "$summary" "$(printf '%s\n' "$text" | grep '^tiny-cpu ')"
run recipes tiny-cpu --json
expect_eq "recipes NAME --json text" "$(cat "$TRNSLURM_SOURCE_DIR/recipes/tiny-cpu.toml")" "$(json 'j["text"]')"
run recipes tiny-cpo --json
expect_eq "recipes --json unknown name exit" 2 "$rc"

run list --json
expect_eq "list --json without chains" "[]" "$out"
run init tiny-cpu
run submit --dry-run --samples 4096 --json
expect_eq "submit --dry-run --json exit" 0 "$rc"
chain=$(json 'j["chain_id"]')
expect_eq "submit --dry-run --json" "True $work/runs/$chain [None, None, None, None]" \
  "$(json 'j["dry_run"], j["run_dir"], [s["job_id"] for s in j["stages"]]')"
expect_contains "submit --dry-run --json: the dependency placeholder" "--dependency=afterok:<job id of convert>" \
  "$(json 'j["stages"][1]["sbatch_argv"]')"
[ -s "runs/$chain/manifest.json" ] || fail "submit --dry-run --json wrote no run directory"
run list --json
expect_eq "list --json exit" 0 "$rc"
expect_eq "list --json one chain" "1 $chain dry-run None" "$(json 'len(j), j[0]["chain_id"], j[0]["state"], j[0]["verdict"]')"
expect_eq "list --json stages" "convert,precompile,train,convert_back [None, None, None, None]" \
  "$(json '",".join(s["stage"] for s in j[0]["stages"]), [s["job_id"] for s in j[0]["stages"]]')"
expect_eq "list --json run_dir" "$work/runs/$chain" "$(json 'j[0]["run_dir"]')"

# env: the same variables and values as the text form.
env_args=(--root "$TRNSLURM_SOURCE_DIR/tests/fixtures/neuron/cluster/n1" --node-name n1 --ignore-env
  --plugstack "$work/none.conf" --nodes 2 --tasks-per-node 4 --node-rank 1 --local-id 3 --nodelist 'n[1-2]')
run env "${env_args[@]}"
expect_eq "env exit" 0 "$rc"
text_names=$(printf '%s\n' "$out" | cut -d= -f1)
run env "${env_args[@]}" --json
expect_eq "env --json exit" 0 "$rc"
expect_eq "env --json names" "$text_names" "$(json '"\n".join(v["name"] for v in j["set"])')"
expect_eq "env --json cores of local task 3 of 4" "24-31" \
  "$(json '[v["value"] for v in j["set"] if v["name"] == "NEURON_RT_VISIBLE_CORES"][0]')"
expect_contains "env --json reasons" "per-task" "$(json '[v["reason"] for v in j["set"] if v["name"] == "NEURON_RT_VISIBLE_CORES"][0]')"
expect_contains "env --json site settings" "built-in defaults" "$(json 'j["site_settings"]')"
run env "${env_args[@]}" --json --trn-cores=lots
expect_eq "env --json bad option exit" 2 "$rc"

run doctor --no-probe --json
expect_eq "doctor --json exit" 1 "$rc"
expect_eq "doctor --json verdict" "False" "$(json 'j["ok"]')"
expect_eq "doctor --json FAIL check" "slurm" "$(json '[c["check"] for c in j["checks"] if c["status"] == "FAIL"][0]')"
expect_eq "doctor --json node" "$(hostname -s)" "$(json 'j["node"]')"
finish
