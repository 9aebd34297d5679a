# The man pages cannot rot: every command and option `trnslurm --help` and `COMMAND --help`
# print is documented in trnslurm(1) under that command, every srun option of the plugin's option
# table and every plugstack argument it accepts in trnslurm-spank(8), and every variable
# docs/plugin.md lists under ENVIRONMENT SET. Both pages render without a groff warning.
source "$(dirname "$0")/lib.sh"
man_dir=$TRNSLURM_SOURCE_DIR/docs/man

# Plain text, one paragraph per line (no hyphenation, no wrapping inside an option name).
render() {
  groff -man -Tascii -rLL=2000n -rHY=0 "$1" 2>/dev/null | col -bx
}
# The lines of a page from heading $2 (exact line) up to the next heading matching $3. awk reads
# to the end: exiting early would kill printf with SIGPIPE, which pipefail turns into a failure.
section() {
  printf '%s\n' "$1" | awk -v start="$2" -v stop="$3" '
    done { next }
    $0 == start { on = 1; next }
    on && $0 ~ stop { done = 1; next }
    on { print }'
}
# The options CLI11 lists in a --help text ("  -r,--recipe PATH  ...").
options_of() {
  printf '%s\n' "$1" | sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n' |
    sed -n 's/^\(--\{0,1\}[A-Za-z][-A-Za-z]*\).*/\1/p' | sort -u
}

for page in "$man_dir/trnslurm.1" "$man_dir/trnslurm-spank.8" "$man_dir/trnslurm.toml.5"; do
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  expect_eq "groff warnings in $(basename "$page")" "" "$warnings"
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  expect_eq "man --warnings in $(basename "$page")" "" "$warnings"
done

page=$(render "$man_dir/trnslurm.1")
run --help
top_help=$out
commands=$(printf '%s\n' "$top_help" | sed -n '/^Subcommands:/,/^$/ s/^  \([a-z][a-z]*\) .*/\1/p')
expect_eq "trnslurm --help lists the 15 commands" 15 "$(printf '%s\n' "$commands" | wc -l)"
for opt in $(options_of "$top_help"); do
  expect_contains "trnslurm.1 GLOBAL OPTIONS documents $opt" "$opt" "$(section "$page" "GLOBAL OPTIONS" '^[A-Z]')"
done
for cmd in $commands; do
  text=$(section "$page" "   $cmd" '^(   [a-z]+|[A-Z].*)$')
  [ -n "$text" ] || fail "trnslurm.1 has no section for '$cmd'"
  run "$cmd" --help
  expect_eq "$cmd --help exit" 0 "$rc"
  expect_contains "$cmd --help has examples" "Examples:" "$out"
  for opt in $(options_of "$out"); do
    [ "$opt" = -h ] || [ "$opt" = --help ] && continue
    expect_contains "trnslurm.1 section $cmd documents $opt" "$opt" "$text"
  done
done

# The plugin's srun options, from its option table (spank/options.cpp), and plugstack arguments,
# from the parser's list of known keys (core/src/node/settings.cpp).
spank=$(render "$man_dir/trnslurm-spank.8")
spank_options=$(sed -n 's/.*{const_cast<char\*>("\(trn-[a-z-]*\)").*/\1/p' "$TRNSLURM_SOURCE_DIR/spank/options.cpp")
expect_eq "the plugin has 8 options" 8 "$(printf '%s\n' "$spank_options" | wc -l)"
for opt in $spank_options; do
  expect_contains "trnslurm-spank.8 OPTIONS documents --$opt" "--$opt" "$(section "$spank" OPTIONS '^[A-Z]')"
  expect_contains "plugin.md documents --$opt" "--$opt" "$(cat "$TRNSLURM_SOURCE_DIR/docs/plugin.md")"
done
keys=$(grep -o 'key == "[a-z_]*"' "$TRNSLURM_SOURCE_DIR/core/src/node/settings.cpp" | sed 's/key == "\(.*\)"/\1/' | sort -u)
expect_eq "the plugin has 20 plugstack arguments" 20 "$(printf '%s\n' "$keys" | wc -l)"
snippet=$(cat "$TRNSLURM_SOURCE_DIR/spank/plugstack.conf.in")
for key in $keys; do
  expect_contains "trnslurm-spank.8 documents $key=" "$key=" "$(section "$spank" "PLUGSTACK ARGUMENTS" '^[A-Z]')"
  expect_contains "plugstack.conf.in lists $key=" "#   $key=" "$snippet"
  expect_contains "plugin.md documents $key=" "\`$key=\`" "$(cat "$TRNSLURM_SOURCE_DIR/docs/plugin.md")"
done
variables=$(sed -n '/^## Every variable it sets/,/^## Precedence/p' "$TRNSLURM_SOURCE_DIR/docs/plugin.md" |
  grep '^|' | grep -o '`[A-Z][A-Z0-9_]*' | tr -d '`' | sort -u)
[ -n "$variables" ] || fail "no variable read from docs/plugin.md"
for v in $variables; do
  expect_contains "trnslurm-spank.8 ENVIRONMENT SET documents $v" "$v" "$(section "$spank" "ENVIRONMENT SET" '^[A-Z]')"
done
finish
