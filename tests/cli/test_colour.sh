# Colour only on a terminal, and never with NO_COLOR (cli/colour.cpp). `doctor` colours its
# ok/warn/FAIL tags; without slurm.conf it prints a FAIL line. `script` gives it a terminal.
source "$(dirname "$0")/lib.sh"
cd "$work"
export SLURM_CONF=$work/no-slurm.conf TERM=xterm
esc=$(printf '\033')

# on_tty ENV...: doctor on a pseudo-terminal, with the given environment.
on_tty() {
  env "$@" script -qec "'$TRNSLURM_BIN' doctor --no-probe --plugstack /nonexistent" /dev/null </dev/null || true
}

unset NO_COLOR
tty_out=$(on_tty)
expect_contains "doctor on a terminal says FAIL" "FAIL" "$tty_out"
expect_contains "doctor on a terminal colours FAIL red" "${esc}[31mFAIL${esc}[0m" "$tty_out"

run doctor --no-probe --plugstack /nonexistent
expect_eq "doctor fails without slurm.conf" 1 "$rc"
expect_contains "doctor to a pipe says FAIL" "FAIL slurm" "$out"
case $out$err in *"$esc"*) fail "escape codes when stdout is not a terminal: $out" ;; esac
checks=$((checks + 1))

for value in 1 yes; do
  out=$(on_tty NO_COLOR=$value)
  expect_contains "NO_COLOR=$value still prints" "FAIL slurm" "$out"
  case $out in *"$esc"*) fail "escape codes with NO_COLOR=$value on a terminal: $out" ;; esac
  checks=$((checks + 1))
done
out=$(on_tty NO_COLOR=)
expect_contains "an empty NO_COLOR does not disable colour" "${esc}[31m" "$out"
out=$(on_tty TERM=dumb)
case $out in *"$esc"*) fail "escape codes with TERM=dumb: $out" ;; esac
checks=$((checks + 1))

# --json never has escape codes, even on a terminal.
out=$(env script -qec "'$TRNSLURM_BIN' doctor --no-probe --json --plugstack /nonexistent" /dev/null </dev/null || true)
expect_contains "doctor --json on a terminal" '"status": "FAIL"' "$out"
case $out in *"$esc"*) fail "escape codes in --json: $out" ;; esac
checks=$((checks + 1))
finish
