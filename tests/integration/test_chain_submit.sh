# `trnslurm submit` of a four-stage chain on the real cluster: stages run in order, status and
# its exit codes, dry run, the rendered scripts pass shellcheck, status from Slurm alone, two
# submits at once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"

# Dry run: everything written, nothing submitted, the sbatch lines printed.
capture "$trn" submit --samples 1000 --dry-run
expect_eq "dry run exit code" 0 "$rc"
dry=$(chain_of "$out")
expect_contains "dry run prints sbatch lines" "sbatch --parsable --job-name=trn-$dry-train" "$out"
expect_contains "dry run shows the dependency" "--dependency=afterok:<job id of precompile>" "$out"
for f in convert.sh precompile.sh train.sh convert_back.sh recipe.toml plan.json manifest.json; do
  expect_eq "dry run wrote $f" yes "$([ -s "runs/$dry/$f" ] && echo yes || echo no)"
done
expect_eq "dry run submitted nothing" "" "$(chain_jobs "$dry")"
expect_contains "dry run manifest state" '"state": "dry-run"' "$(cat "runs/$dry/manifest.json")"
# The plan's figures reach the train script, quoted.
steps=$(sed -n 's/.*"total_steps": \([0-9]*\).*/\1/p' "runs/$dry/plan.json")
expect_contains "train script exports the plan" "export TRNSLURM_TOTAL_STEPS='$steps'" "$(cat "runs/$dry/train.sh")"
checks=$((checks + 1))
shellcheck -s bash "runs/$dry"/*.sh || fail "shellcheck found problems in the rendered scripts"

capture "$trn" status
expect_eq "status of a dry run" 2 "$rc"
expect_contains "status of a dry run says so" "was a dry run" "$out"

# Stage selection: --from/--until keep a slice, whose first stage depends on nothing.
capture "$trn" submit --samples 1000 --dry-run --from precompile --until train
expect_eq "selected stages" "precompile train" \
  "$(grep -o -- '--job-name=trn-[^ ]*' <<<"$out" | sed 's/.*-\([a-z_]*\)$/\1/' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "first selected stage has no dependency" "" "$(grep -- '-precompile ' <<<"$out" | grep -o -- '--dependency[^ ]*' || true)"
capture "$trn" submit --samples 1000 --dry-run --only trian
expect_eq "exit code for an unknown stage" 2 "$rc"
expect_contains "unknown stage message" "enabled stages: convert, precompile, train, convert_back" "$out"

# A real chain: completes in order, status says so with exit code 0.
capture "$trn" submit --samples 1000
expect_eq "submit exit code" 0 "$rc"
c=$(chain_of "$out")
expect_eq "four jobs submitted" 4 "$(chain_jobs "$c" | wc -l)"
capture "$trn" status
expect_eq "status of a new chain: running (3) or done (0)" yes "$([ "$rc" = 3 ] || [ "$rc" = 0 ] && echo yes || echo no)"
expect_eq "chain outcome" 0 "$(wait_chain "$c")"
expect_eq "stages ran in order" "convert precompile train convert_back" "$(tr '\n' ' ' <"runs/$c/order" | sed 's/ $//')"
capture "$trn" status "$c"
expect_eq "status exit code" 0 "$rc"
expect_contains "status line of train" "COMPLETED" "$(grep ' train ' <<<"$out")"
expect_contains "status verdict" "succeeded" "$out"
capture "$trn" status "$c" --json
expect_contains "status --json" '"verdict": "succeeded"' "$out"
train_id=$(grep -o 'trn-'"$c"'-train' <<<"$(chain_jobs "$c")" >/dev/null && chain_jobs "$c" | awk '$2 ~ /-train$/ {print $1}')
capture "$trn" logs "$c" --stage train
expect_contains "logs of train" "train steps=$steps" "$out"
expect_contains "list shows the chain" "$c" "$("$trn" list)"

# Every job carries its chain: status works from Slurm alone once the run directory is gone.
mv "runs/$c" "$work/moved"
capture "$trn" status "$c"
expect_eq "status from Slurm alone" 0 "$rc"
expect_contains "status from Slurm alone names the stage" "$train_id" "$out"
expect_contains "status from Slurm alone says so" "from Slurm alone" "$out"
mv "$work/moved" "runs/$c"

# A job status has seen end is not asked again: the state recorded in the manifest stands, even
# for an id Slurm never had (squeue -j would exit 1 for it).
sed -i "s/^job train $train_id\$/job train 999999/" "runs/$c/journal"
expect_contains "journal edited" "job train 999999" "$(cat "runs/$c/journal")"
capture "$trn" status "$c"
expect_eq "status with a recorded end" 0 "$rc"
expect_contains "recorded end from the manifest" "999999  COMPLETED" "$(grep ' train ' <<<"$out")"

# watch (not a terminal: plain status blocks) until the end; logs -f follows a stage to its end.
capture "$trn" submit --samples 1000 --set 'stages.train.command=echo begin; sleep 2; echo end'
c=$(chain_of "$out")
capture "$trn" logs "$c" --stage train -f
expect_eq "logs -f exit code" 0 "$rc"
expect_contains "logs -f saw the end of train" "begin
end" "$out"
capture "$trn" watch "$c" --interval 0.2
expect_eq "watch exit code" 0 "$rc"
expect_contains "watch ends with the verdict" "succeeded" "$(tail -n 1 <<<"$out")"

# Two submits at the same time: two chains, each whole and in order.
"$trn" submit --samples 1000 >"$work/a.out" 2>&1 &
pa=$!
"$trn" submit --samples 1000 >"$work/b.out" 2>&1 &
pb=$!
wait "$pa" || fail "first concurrent submit failed: $(cat "$work/a.out")"
wait "$pb" || fail "second concurrent submit failed: $(cat "$work/b.out")"
a=$(chain_of "$(cat "$work/a.out")")
b=$(chain_of "$(cat "$work/b.out")")
checks=$((checks + 1))
[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] || fail "two submits gave chains '$a' and '$b'"
expect_eq "chain a outcome" 0 "$(wait_chain "$a")"
expect_eq "chain b outcome" 0 "$(wait_chain "$b")"
for x in "$a" "$b"; do
  expect_eq "chain $x has four jobs" 4 "$(chain_jobs "$x" | wc -l)"
  expect_eq "chain $x order" "convert precompile train convert_back" "$(tr '\n' ' ' <"runs/$x/order" | sed 's/ $//')"
done
finish
