# `trnslurm env`: its output is for `eval` (docs/plugin.md), with --explain too: a value of the
# user's environment that it prints (kept, left alone) can never become a command, whatever it
# holds. No Slurm needed.
source "$(dirname "$0")/lib.sh"
cd "$work"
export SLURM_CONF=$work/slurm.conf
printf 'PlugStackConfig=%s/plugstack.conf\n' "$work" >slurm.conf
: >plugstack.conf

hostile=$'x\ntouch owned\n'
MASTER_ADDR=$hostile run env --explain
expect_eq "env --explain exit" 0 "$rc"
expect_contains "the kept value is shown, escaped on its line" '# kept MASTER_ADDR=x\ntouch owned\n:' "$out"
(
  set -a
  eval "$out"
) >/dev/null 2>&1 || true
[ ! -e owned ] || fail "eval of env --explain ran a line of a kept value: $out"
checks=$((checks + 1))
expect_eq "every line of env --explain is an assignment or a comment" "" \
  "$(grep -Ev '^([A-Z_][A-Z0-9_]*=|# )' <<<"$out" || true)"
finish
