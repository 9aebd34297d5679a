# init, recipes and plan as a user runs them: files, overrides, JSON, messages and exit codes
# (0 ok, 2 bad input). No Slurm needed.
source "$(dirname "$0")/lib.sh"
fixtures=$TRNSLURM_SOURCE_DIR/tests/fixtures/recipes
cd "$work"

# recipes lists every bundled recipe, from any directory; NAME prints one.
run recipes
expect_eq "recipes exit" 0 "$rc"
expect_contains "recipes lists tiny-cpu" "tiny-cpu" "$out"
expect_contains "recipes lists llama2-7b" "llama2-7b-trn1" "$out"
expect_eq "recipes lists those of recipes/" "$(source_recipe_names)" "$(awk '{print $1}' <<<"$out" | sort)"
run recipes tiny-cpu
expect_contains "recipes NAME prints the TOML" '[stages.train]' "$out"
run recipes tiny-cpo
expect_eq "unknown recipe exit" 2 "$rc"
expect_contains "unknown recipe did-you-mean" "did you mean 'tiny-cpu'?" "$err"

# Without ./trnslurm.toml, plan says how to get one.
run plan --samples 1000
expect_eq "plan without a recipe" 2 "$rc"
expect_contains "plan without a recipe hint" "trnslurm init" "$err"

# init writes ./trnslurm.toml, then refuses to overwrite it without --force.
run init tiny-cpu
expect_eq "init exit" 0 "$rc"
expect_eq "init wrote the bundled text" "$(cat "$TRNSLURM_SOURCE_DIR/recipes/tiny-cpu.toml")" "$(cat trnslurm.toml)"
echo "# edited" >>trnslurm.toml
run init llama2-7b-trn1
expect_eq "init over an existing file" 2 "$rc"
expect_contains "init names the file" "trnslurm.toml: already exists" "$err"
expect_contains "init keeps the file" "# edited" "$(cat trnslurm.toml)"
run init --force llama2-7b-trn1
expect_eq "init --force" 0 "$rc"
expect_contains "init --force overwrote" 'instance = "trn1.32xlarge"' "$(cat trnslurm.toml)"
run init tiny-cpu -o other.toml
expect_eq "init -o" 0 "$rc"
[ -f other.toml ] || fail "init -o wrote nothing"
[ ! -e other.toml.tmp ] || fail "init left its temporary file"

# plan reads ./trnslurm.toml: the table explains each figure.
run plan --samples 1000000
expect_eq "plan exit" 0 "$rc"
expect_contains "plan dp" "world_size 128 / (tp 8 x pp 1)" "$out"
expect_contains "plan steps" "floor(micro_steps_per_epoch / grad_accum) = floor(62500 / 64)" "$out"
expect_contains "plan memory" "of 16.0 GiB per core" "$out"

# --json, with overrides and -r.
run plan -r other.toml --samples 1000 --json --epochs 1
expect_eq "plan --json exit" 0 "$rc"
expect_eq "json dp" 2 "$(json_value dp)"
expect_eq "json grad_accum" 4 "$(json_value grad_accum)"
expect_eq "json steps_per_epoch" 125 "$(json_value steps_per_epoch)"
expect_eq "json total_steps" 125 "$(json_value total_steps)"
expect_eq "json warmup_steps" 2 "$(json_value warmup_steps)"
expect_eq "json instance" cpu "$(json_value instance)"
run plan -r other.toml --samples 1000 --json --epochs 3 --nodes 4 --dataset /data/x --set train.gbs=16
expect_eq "overrides exit" 0 "$rc"
expect_eq "--nodes" 4 "$(json_value nodes)"
expect_eq "--nodes world" 8 "$(json_value world_size)"
expect_eq "--epochs" 3 "$(json_value epochs)"
expect_eq "--set gbs" 16 "$(json_value gbs)"
expect_eq "--dataset" /data/x "$(json_value dataset_path)"
# 1000 samples / dp 4 = 250 micro-steps; acc 16 / (1 x 4) = 4; floor(3 x 250 / 4) = 187.
expect_eq "total over 3 epochs" 187 "$(json_value total_steps)"
run plan -r other.toml --tokens 32001 --json
expect_eq "--tokens samples" 1000 "$(json_value samples)"
expect_eq "--tokens tokens" 32001 "$(json_value tokens)"

# The dataset is counted from its headers: relative --dataset paths are relative to the cwd.
mkdir -p data && cp -r "$TRNSLURM_SOURCE_DIR/tests/fixtures/datasets/hf_fixed" data/
run plan -r other.toml --dataset data/hf_fixed --set dataset.format=auto --set train.gbs=4 --set model.seq_len=16 --json
expect_eq "dataset plan exit" 0 "$rc"
expect_eq "dataset samples" 32 "$(json_value samples)"
expect_eq "dataset path resolved" "$work/data/hf_fixed" "$(json_value dataset_path)"
expect_eq "dataset steps" 8 "$(json_value steps_per_epoch)"
run plan -r other.toml --dataset data/missing
expect_eq "missing dataset exit" 2 "$rc"
expect_contains "missing dataset names it" "$work/data/missing" "$err"

# Each --set takes exactly one value: a stray word is an error, not another override.
run plan -r other.toml --samples 1000 --set train.gbs=16 stray
expect_eq "stray argument exit" 2 "$rc"
run plan --no-such-option
expect_eq "unknown option exit" 2 "$rc"
run plan --help
expect_eq "help exit" 0 "$rc"

# Bad input: exit 2 with where and a hint; nothing on stdout.
run plan -r other.toml --samples 1000 --set train.gsb=8
expect_eq "unknown --set exit" 2 "$rc"
expect_contains "unknown --set" "trnslurm: --set train.gsb: unknown recipe key 'train.gsb'" "$err"
expect_contains "unknown --set hint" "did you mean 'train.gbs'?" "$err"
expect_eq "nothing on stdout" "" "$out"
run plan -r other.toml --samples 1000 --nodes two
expect_eq "bad --nodes exit" 2 "$rc"
expect_contains "bad --nodes" "trnslurm: --nodes: 'two' is not an integer" "$err"
run plan -r other.toml --samples 1000 --set train.gbs=9
expect_eq "bad gbs exit" 2 "$rc"
expect_contains "bad gbs hint" "use gbs = 8 or 10" "$err"
# TP 1 is below tiny's 2 kv heads: NxD's converter would fail its job, so the plan refuses it.
run plan -r other.toml --samples 1000 --set train.tp=1
expect_eq "TP below the kv heads exit" 2 "$rc"
expect_contains "TP below the kv heads" "tp = 1 is below the model's 2 kv heads" "$err"
run plan -r "$fixtures/unknown_key.toml" --samples 1000
expect_eq "bad recipe exit" 2 "$rc"
expect_contains "bad recipe position" "unknown_key.toml:3:1: unknown key 'layres' in [model]" "$err"
expect_contains "bad recipe hint" "hint: did you mean 'layers'?" "$err"
run plan -r other.toml --samples lots
expect_eq "bad --samples exit" 2 "$rc"

# A plan that will not fit warns with the numbers but still plans.
run plan --samples 10000000 --set model.layers=80 --set model.hidden=8192 --set model.heads=64 \
  --set model.kv_heads=8 --set model.ffn_hidden=28672
expect_eq "over memory still plans" 0 "$rc"
expect_contains "over memory warning" "exceeds the 16.0 GiB of a trn1.32xlarge core" "$err"
expect_contains "over memory in the table" "DOES NOT FIT" "$out"

finish
