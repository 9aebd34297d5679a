# scripts/completion.bash as bash runs it: COMP_WORDS/COMP_CWORD set, _trnslurm called,
# COMPREPLY checked for subcommands, options (read from --help), stage names, option values,
# bundled recipe names and chain ids (from `trnslurm list`, else the run directories).
source "$(dirname "$0")/lib.sh"
cd "$work"
mkdir bin
ln -s "$TRNSLURM_BIN" bin/trnslurm
export PATH="$work/bin:$PATH"

# complete WORD...: completes the last word (may be empty); the candidates, sorted, one a line.
complete_words() {
  bash -c '
    source "$1/scripts/completion.bash"
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    _trnslurm
    printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$TRNSLURM_SOURCE_DIR" "$@"
}
lines() { printf '%s\n' "$@" | sort; }

[ "$(bash -c 'source "$1/scripts/completion.bash"; complete -p trnslurm' _ "$TRNSLURM_SOURCE_DIR")" = \
  "complete -F _trnslurm trnslurm" ] || fail "completion.bash does not register _trnslurm"
# Every command of `trnslurm --help` (a new command without completion fails here).
run --help
expect_eq "commands" "$(printf '%s\n' "$out" | sed -n '/^Subcommands:/,/^$/ s/^  \([a-z][a-z]*\) .*/\1/p' | sort)" \
  "$(complete_words trnslurm '')"
expect_eq "15 commands" 15 "$(complete_words trnslurm '' | wc -l)"
expect_eq "commands by prefix" "status" "$(complete_words trnslurm st)"
expect_eq "report by prefix" "report" "$(complete_words trnslurm rep)"
expect_eq "global options" "$(lines --help --version)" "$(complete_words trnslurm --)"

# Options come from the binary's own --help.
plan_opts=$(complete_words trnslurm plan --)
for o in --recipe --set --nodes --epochs --dataset --json --samples --tokens --verify --suggest --nodes-max \
  --mbs-max --by --top --efficiency --apply --help; do
  expect_contains "plan option $o" "$o" "$plan_opts"
done
expect_eq "submit --dr" "--dry-run" "$(complete_words trnslurm submit --dr)"
expect_eq "env --trn-c" "$(lines --trn-cache --trn-cores)" "$(complete_words trnslurm env --trn-c)"
expect_eq "cache actions" "$(lines clear key list)" "$(complete_words trnslurm cache '')"
expect_eq "submit --precompile values" "$(lines always auto)" "$(complete_words trnslurm submit --precompile a)"
expect_eq "logs options" "--follow" "$(complete_words trnslurm logs --fol)"

# Values.
expect_eq "stage names" "$(lines convert precompile train convert_back)" "$(complete_words trnslurm submit --only '')"
expect_eq "stage by prefix" "$(lines convert convert_back)" "$(complete_words trnslurm logs --stage conv)"
expect_eq "--stage-arg" "$(lines convert= convert_back=)" "$(complete_words trnslurm submit --stage-arg con)"
expect_eq "--trn-cores values" "$(lines auto per-node per-task)" "$(complete_words trnslurm env --trn-cores '')"
expect_eq "--trn-efa values" "$(lines auto off on)" "$(complete_words trnslurm env --trn-efa '')"
expect_eq "free values get nothing" "" "$(complete_words trnslurm plan --samples '')"
expect_eq "plan --by values" "$(lines cost time)" "$(complete_words trnslurm plan --by '')"
expect_eq "plan --top takes a number" "" "$(complete_words trnslurm plan --top '')"
touch my-recipe.toml
expect_eq "-r completes files" "my-recipe.toml" "$(complete_words trnslurm plan -r my-)"

# Bundled recipe names, exactly `trnslurm recipes`' first column.
run recipes
expect_eq "init recipe names" "$(printf '%s\n' "$out" | cut -d' ' -f1 | sort)" "$(complete_words trnslurm init '')"
expect_eq "init by prefix" "$(lines tiny-cpu tiny-titan-cpu)" "$(complete_words trnslurm init tiny)"
expect_eq "recipes NAME" "$(lines llama2-7b-trn1)" "$(complete_words trnslurm recipes llama2-7b-trn1)"

# Instance types, exactly the first column of `trnslurm instances`' table.
run instances
expect_eq "instance types" "$(printf '%s\n' "$out" | sed -n '2,/^$/ s/ .*//p' | grep . | sort)" \
  "$(complete_words trnslurm instances '')"
expect_eq "instance types by prefix" "$(lines trn2.3xlarge trn2.48xlarge trn2u.48xlarge)" \
  "$(complete_words trnslurm instances trn2)"

# Chain ids, from `trnslurm list` (dry-run chains need no Slurm).
run init tiny-cpu
run submit --dry-run --samples 4096
expect_eq "dry run" 0 "$rc"
chain=$(printf '%s\n' "$out" | sed -n 's/^chain \([^ ]*\) .*/\1/p')
[ -n "$chain" ] || fail "no chain id in: $out"
expect_eq "status CHAIN" "$chain" "$(complete_words trnslurm status '')"
expect_eq "logs CHAIN after options" "$chain" "$(complete_words trnslurm logs --stage train '')"
mkdir -p other/20261122-000000-000-0badc0de
expect_eq "--runs-dir elsewhere, from the directory names" "20261122-000000-000-0badc0de" \
  "$(complete_words trnslurm cancel --runs-dir other '')"
expect_eq "--runs-dir=DIR" "20261122-000000-000-0badc0de" "$(complete_words trnslurm watch --runs-dir=other 2026)"
finish
