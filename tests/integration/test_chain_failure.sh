# What goes wrong, on the real cluster: a failing middle stage, sbatch failing at each stage k
# (rollback), Ctrl-C during submission, cancel in the middle of a run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"

# A failing middle stage: status names it and its log, exits 1, and no job of the chain is left.
capture "$trn" submit --samples 1000 --set 'stages.precompile.command=echo compiling; exit 3'
expect_eq "submit exit code" 0 "$rc"
c=$(chain_of "$out")
expect_eq "failed chain outcome" 1 "$(wait_chain "$c")"
capture "$trn" status "$c"
expect_eq "status exit code of a failed chain" 1 "$rc"
expect_contains "status names the failed stage" "failed: precompile failed" "$out"
expect_contains "status names its log" "runs/$c/logs/precompile-" "$out"
expect_contains "exit code of the failed stage" "FAILED" "$(grep ' precompile ' <<<"$out")"
expect_contains "dependent stage" "blocked: precompile failed" "$(grep ' train ' <<<"$out")"
expect_contains "grandchild stage" "blocked: precompile failed" "$(grep ' convert_back ' <<<"$out")"
expect_eq "no job of the failed chain left" "" "$(active_jobs "$c")"
expect_eq "only convert ran" "convert" "$(cat "runs/$c/order")"
capture "$trn" logs "$c"
expect_contains "logs defaults to the failed stage" "compiling" "$out"

# sbatch failing at stage k (a partition that does not exist, for that stage only): every job
# already submitted is cancelled, sbatch's own message is shown, the exit code is 1.
k=0
for stage in convert precompile train convert_back; do
  k=$((k + 1))
  capture "$trn" submit --samples 1000 "--stage-arg=$stage=--partition=nope"
  expect_eq "exit code when sbatch fails at stage $k" 1 "$rc"
  expect_contains "sbatch's message at stage $k" "sbatch: error: invalid partition specified: nope" "$out"
  expect_contains "failing stage named at stage $k" "sbatch of stage $stage ($k of 4)" "$out"
  x=$(chain_of "$(grep 'not submitted' <<<"$out")")
  expect_eq "chain id reported at stage $k" yes "$([ -n "$x" ] && echo yes || echo no)"
  expect_eq "no job left when sbatch fails at stage $k" "" "$(active_jobs "$x")"
  expect_eq "jobs submitted then cancelled at stage $k" "$((k - 1))" \
    "$(chain_jobs "$x" | grep -c ' CANCELLED$' || true)"
  expect_contains "recorded state at stage $k" "rolled-back" "$("$trn" list | grep "$x")"
done

# Ctrl-C during submission: an sbatch that takes a second (a wrapper in front of the real one,
# only to slow it down) lets the interrupt land mid-chain; the chain is rolled back.
mkdir -p "$work/slow"
real_sbatch=$(command -v sbatch)
printf '#!/bin/sh\nsleep 1\nexec %s "$@"\n' "$real_sbatch" >"$work/slow/sbatch"
chmod +x "$work/slow/sbatch"
PATH="$work/slow:$PATH" "$trn" submit --samples 1000 >"$work/int.out" 2>&1 &
pid=$!
sleep 1.5
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
out=$(cat "$work/int.out")
expect_eq "exit code after Ctrl-C" 1 "$rc"
expect_contains "Ctrl-C message" "interrupted" "$out"
x=$(chain_of "$(grep 'not submitted' <<<"$out")")
expect_eq "no job left after Ctrl-C" "" "$(active_jobs "$x")"
checks=$((checks + 1))
[ "$(chain_jobs "$x" | grep -c ' CANCELLED$' || true)" -ge 1 ] || fail "Ctrl-C: no job had been submitted: $out"

# cancel in the middle of a run: nothing of the chain is left in the queue.
capture "$trn" submit --samples 1000 --set 'stages.train.command=sleep 60'
c=$(chain_of "$out")
deadline=$((SECONDS + 30))
until chain_jobs "$c" | grep -q -- '-train RUNNING$'; do
  [ $SECONDS -lt $deadline ] || fail "train never started: $(chain_jobs "$c")"
  sleep 0.2
done
capture "$trn" cancel "$c"
expect_eq "cancel exit code" 0 "$rc"
expect_contains "cancel confirms" "no job of it remains" "$out"
expect_contains "recorded state after cancel" "cancelled" "$("$trn" list | grep "$c")"
expect_eq "nothing left after cancel" "" "$(active_jobs "$c")"
capture "$trn" status "$c"
expect_eq "status of a cancelled chain" 1 "$rc"
expect_nodes_idle "chain failures"
finish
