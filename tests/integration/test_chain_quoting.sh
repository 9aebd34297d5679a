# Recipe values holding quotes, $, backticks, spaces, a backslash, braces, a newline and a tab
# reach every stage literally, through every quoting context a template can put them in; nothing
# the recipe did not ask for runs. Values no shell word can hold are refused before anything is
# written or submitted.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"
cp "$TRNSLURM_SOURCE_DIR/tests/fixtures/chain/quoting.toml" "$work/trnslurm.toml"

expected=$(printf 'it'"'"'s "quoted" $HOME `touch marker1` $(touch marker2) ; touch marker3 \\ {{x}}\nsecond line\tafter a tab')
capture "$trn" submit --samples 1000
expect_eq "submit exit code" 0 "$rc"
c=$(chain_of "$out")
expect_eq "chain outcome" 0 "$(wait_chain "$c")"
checks=$((checks + 1))
shellcheck -s bash "runs/$c"/*.sh || fail "shellcheck found problems in the rendered scripts"
expect_eq "value in an unquoted context" "$expected" "$(cat "runs/$c/unquoted")"
expect_eq "value inside double quotes" "[$expected]" "$(cat "runs/$c/double")"
expect_eq "value inside single quotes (a nested bash -c)" "$expected" "$(cat "runs/$c/single")"
# ... and in that inner shell's double quotes and here-document (placed without quotes there)
expect_eq "value in a nested bash -c's double quotes" "[$expected]" "$(cat "runs/$c/single_double")"
expect_eq "value in a nested bash -c's here-document" "$expected" "$(cat "runs/$c/single_heredoc")"
expect_eq "value in a stage's env" "<$expected>" "$(cat "runs/$c/env")"
for m in marker1 marker2 marker3; do
  expect_eq "$m not created" no "$([ -e "$work/$m" ] || [ -e "runs/$c/$m" ] && echo yes || echo no)"
done

# A value with an escape character: refused when the recipe loads, at its file:line:column, nothing written.
before=$(ls runs | wc -l)
sed -i 's/^name = .*/name = "bad\\u001bvalue"/' trnslurm.toml
capture "$trn" submit --samples 1000
expect_eq "exit code for an unquotable value" 2 "$rc"
expect_contains "message for an unquotable value" "holds a control character (U+001B)" "$out"
expect_contains "where the value is" "trnslurm.toml:5:8:" "$out"
expect_eq "nothing written for an unquotable value" "$before" "$(ls runs | wc -l)"

# An unknown placeholder: refused at the recipe's file:line:column, nothing written.
sed -i 's/^name = .*/name = "ok"/' trnslurm.toml
line=$(grep -n "printf '%s' {{model.name}}" trnslurm.toml | cut -d: -f1)
sed -i "s/printf '%s' {{model.name}}/printf '%s' {{model.nmae}}/" trnslurm.toml
capture "$trn" submit --samples 1000 --dry-run
expect_eq "exit code for an unknown placeholder" 2 "$rc"
expect_contains "unknown placeholder at file:line:column" "trnslurm.toml:$line:13: unknown placeholder '{{model.nmae}}'" "$out"
expect_eq "nothing written for an unknown placeholder" "$before" "$(ls runs | wc -l)"
finish
