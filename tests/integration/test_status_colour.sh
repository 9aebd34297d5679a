# Colour of status and watch on the real cluster: stage states and the verdict coloured on a
# terminal (`script` gives one), nothing on a pipe or with NO_COLOR, and the same columns once the
# escape codes are stripped.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"
esc=$(printf '\033')
export TERM=xterm

capture "$trn" submit --samples 1000 --only convert
expect_eq "submit exit code" 0 "$rc"
chain=$(chain_of "$out")
expect_eq "the chain succeeded" 0 "$(wait_chain "$chain")"

on_tty() {  # on_tty ENV... -- ARGS...: trnslurm ARGS on a pseudo-terminal, CRs removed
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" script -qec "$(printf '%q ' "$trn" "$@")" /dev/null </dev/null | tr -d '\r' || true
}

capture "$trn" status "$chain"
expect_eq "status exit" 0 "$rc"
plain=$out
expect_contains "status to a pipe" "COMPLETED" "$plain"
case $plain in *"$esc"*) fail "escape codes in status to a pipe" ;; esac
checks=$((checks + 1))

tty=$(on_tty -- status "$chain")
expect_contains "status on a terminal: the state in green" "${esc}[32mCOMPLETED${esc}[0m" "$tty"
expect_contains "status on a terminal: the verdict in green" "${esc}[32msucceeded${esc}[0m" "$tty"
expect_eq "same columns without the escape codes" "$plain" "$(printf '%s\n' "$tty" | sed "s/${esc}\[[0-9]*m//g")"

tty=$(on_tty NO_COLOR=1 -- status "$chain")
expect_contains "NO_COLOR status" "COMPLETED" "$tty"
case $tty in *"$esc"*) fail "escape codes with NO_COLOR=1 on a terminal: $tty" ;; esac
checks=$((checks + 1))

tty=$(on_tty -- watch "$chain")
expect_contains "watch on a terminal" "${esc}[32msucceeded${esc}[0m" "$tty"
capture "$trn" watch "$chain"
case $out in *"$esc"*) fail "escape codes in watch to a pipe" ;; esac
checks=$((checks + 1))
finish
