# What scripts and terminals get on the real cluster: `submit --json` (the job ids Slurm gave),
# and the colour of status and watch: stage states and the verdict coloured on a terminal
# (`script` gives one), nothing on a pipe or with NO_COLOR, the same columns once the escape codes
# are stripped.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"
esc=$(printf '\033')
export TERM=xterm

set +e
out=$("$trn" submit --samples 1000 --from convert --until precompile --json)
rc=$?
set -e
expect_eq "submit --json exit code" 0 "$rc"
chain=$(json 'j["chain_id"]')
expect_eq "submit --json: not a dry run, two stages" "False convert,precompile" \
  "$(json 'j["dry_run"], ",".join(s["stage"] for s in j["stages"])')"
expect_eq "submit --json: the job ids Slurm has" "$(chain_jobs "$chain" | cut -d' ' -f1 | tr '\n' ' ')" \
  "$(json '" ".join(str(s["job_id"]) for s in j["stages"]) + " "')"
expect_contains "submit --json: the dependency on the real id" \
  "--dependency=afterok:$(json 'j["stages"][0]["job_id"]')" "$(json 'j["stages"][1]["sbatch_argv"]')"
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
