# plan --suggest and --apply as a user runs them: every bundled recipe's own configuration among
# those that fit, a known misfit marked, the table, JSON, options, and the recipe file rewritten
# in place (comments kept) or left alone when refused. No Slurm needed.
source "$(dirname "$0")/lib.sh"
recipes=$TRNSLURM_SOURCE_DIR/recipes
cd "$work"

# Every bundled recipe: its published configuration is searched, fits, and is listed as fitting.
names=$("$TRNSLURM_BIN" recipes | cut -d' ' -f1)
expect_eq "the bundled recipes: those of recipes/" "$(source_recipe_names)" "$(sort <<<"$names")"
for name in $names; do
  # TorchTitan's recipes take upstream's local batch of 8.
  run plan -r "$recipes/$name.toml" --samples 10000000 --suggest --json --top 100000 --mbs-max 8
  expect_eq "$name --suggest exit" 0 "$rc"
  # In the search, fitting, and listed once, at its rank, as fitting.
  expect_eq "$name: the recipe's configuration" "True True [True] True" "$(json '" ".join(str(x) for x in (
    j["recipe"]["in_search"], j["recipe"]["memory"]["fits"],
    [s["memory"]["fits"] for s in j["suggestions"] if all(s[k] == j["recipe"][k] for k in ("nodes", "lnc", "tp", "pp", "mbs"))],
    all(j["suggestions"][j["recipe"]["rank"] - 1][k] == j["recipe"][k] for k in ("nodes", "lnc", "tp", "pp", "mbs"))))')"
done

# Llama2-70B with TP 8 on one trn1 node: nothing fits, TP 8 marked so, in JSON and in the table.
args=(plan -r "$recipes/llama2-70b-trn1.toml" --samples 100000 --nodes 1 --set train.tp=8 --set train.pp=1 --suggest)
run "${args[@]}" --json --top 1000
expect_eq "70B on one node exit" 0 "$rc"
expect_eq "70B TP 8 on one trn1 node does not fit" False "$(json 'j["recipe"]["memory"]["fits"]')"
expect_eq "its margin is negative" True "$(json 'j["recipe"]["memory"]["margin_bytes"] < 0')"
expect_eq "listed as not fitting" "[False]" "$(json '[s["memory"]["fits"] for s in j["suggestions"]
  if (s["nodes"], s["tp"], s["pp"], s["mbs"]) == (1, 8, 1, 1)]')"
expect_eq "nothing fits on one node" 0 "$(json 'j["fit"]')"
run "${args[@]}"
expect_contains "the table says so" "does not fit" "$out"
expect_contains "the table shows the recipe's rank" "the recipe's configuration ranks" "$out"

# The table: header, the recipe's row, the hint to apply; --top limits the rows.
cp "$recipes/llama3-70b-trn2.toml" trnslurm.toml
run plan --samples 1000000 --suggest --nodes-max 16 --top 3
expect_eq "table exit" 0 "$rc"
expect_contains "table header" "rank nodes lnc" "$out"
expect_contains "table recipe row" "  recipe " "$out"
expect_contains "table apply hint" "--apply RANK" "$out"
expect_eq "--top 3 rows" 3 "$(printf '%s\n' "$out" | grep -cE '^ +[0-9]+ +[0-9]+ +[12] ')"

# JSON: the ranking explained, every term of the model, sort keys in order.
run plan --samples 1000000 --suggest --nodes-max 16 --top 20 --json
expect_eq "json exit" 0 "$rc"
expect_eq "20 suggestions" 20 "$(json 'len(j["suggestions"])')"
expect_eq "ranks 1..20" True "$(json '[s["rank"] for s in j["suggestions"]] == list(range(1, 21))')"
expect_eq "sort keys ascend" True "$(json 'all(a["sort_key"] < b["sort_key"] for a, b in zip(j["suggestions"], j["suggestions"][1:]))')"
expect_eq "sort key named" 10 "$(json 'len(j["ranking"]["sort_key"])')"
expect_contains "ranking explained" "fewer nodes" "$(json 'j["ranking"]["why"]')"
expect_eq "terms add up" True "$(json 'all(abs(t["compute_s"] + t["tp_comm_s"] + t["bubble_s"] + t["dp_allreduce_s"] - t["total_s"]) < 1e-9 * t["total_s"]
  for t in (s["step_time"] for s in j["suggestions"]))')"
expect_eq "model stated" True "$(json 'all(k in j["step_time_model"] for k in ("compute_s", "tp_comm_s", "bubble_s", "dp_allreduce_s"))')"
expect_eq "refusals counted" True "$(json 'j["considered"] == j["accepted"] + sum(r["count"] for r in j["refused"])')"
expect_eq "efficiency default" 0.3 "$(json 'j["efficiency"]')"

# By cost, with and without a price.
run plan --samples 1000000 --suggest --nodes-max 8 --by cost --set estimate.price_per_node_hour=30 --json
expect_eq "by cost" cost "$(json 'j["by"]')"
expect_eq "cost = node-hours x price" True "$(json 'abs(j["suggestions"][0]["cost"] - 30 * j["suggestions"][0]["node_hours"]) < 1e-6')"
run plan --samples 1000000 --suggest --nodes-max 8 --by cost
expect_contains "no price: node-hours" "node-hours" "$err"

# Bad options: clear error, exit 2.
run plan --samples 1000 --top 3
expect_eq "--top without --suggest" 2 "$rc"
expect_contains "--top needs --suggest" "--top needs --suggest" "$err"
run plan --samples 1000 --suggest --by speed
expect_eq "--by speed" 2 "$rc"
run plan --samples 1000 --suggest --efficiency 2
expect_eq "--efficiency 2" 2 "$rc"

# --apply writes the chosen configuration, keeps every comment and other line, reads back.
cp trnslurm.toml before.toml
run plan --samples 1000000 --suggest --nodes-max 16 --top 5 --json
want=$(json 'str([j["suggestions"][2][k] for k in ("nodes", "lnc", "tp", "pp", "mbs")])')
run plan --samples 1000000 --suggest --nodes-max 16 --apply 3
expect_eq "--apply exit" 0 "$rc"
expect_contains "--apply says what it wrote" "wrote configuration 3 into trnslurm.toml" "$out"
run plan --samples 1000000 --json
expect_eq "the file plans to configuration 3" "$want" "$(json 'str([j[k] for k in ("nodes", "lnc", "tp", "pp", "mbs")])')"
expect_eq "comments kept" "$(grep -c '#' before.toml)" "$(grep -c '#' trnslurm.toml)"
expect_eq "only the applied keys changed" "" \
  "$(diff before.toml trnslurm.toml | grep '^[<>]' | grep -vE '^[<>] (nodes|lnc|tp|pp|mbs) = ' || true)"
expect_eq "no temporary file left" "before.toml trnslurm.toml" "$(echo *)"

# Refused: beyond the ranking, a configuration that does not fit; the file is left alone.
cp trnslurm.toml kept.toml
run plan --samples 1000000 --suggest --nodes-max 2 --apply 100000
expect_eq "--apply past the ranking" 2 "$rc"
expect_contains "--apply past the ranking says so" "there is no configuration 100000" "$err"
cp "$recipes/llama2-70b-trn1.toml" misfit.toml
run "${args[@]:0:1}" -r misfit.toml "${args[@]:3}" --apply 1
expect_eq "--apply of a misfit" 2 "$rc"
expect_contains "--apply of a misfit says so" "does not fit" "$err"
expect_eq "misfit recipe untouched" "" "$(diff "$recipes/llama2-70b-trn1.toml" misfit.toml)"
expect_eq "recipe untouched" "" "$(diff kept.toml trnslurm.toml)"

# What the command line overrides besides the applied keys is named, not written.
run plan --samples 1000000 --suggest --nodes-max 4 --set train.gbs=512 --apply 1
expect_eq "--apply with --set exit" 0 "$rc"
expect_contains "--set not written" "--set train.gbs was given on the command line and is not written" "$err"
expect_contains "gbs stays as written" "gbs = 1024" "$(cat trnslurm.toml)"
finish
