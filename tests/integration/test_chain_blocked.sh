# How `status` judges a chain from what Slurm shows, on a cluster of its own (the directory and
# ports CTest gives it, BASE+200...: tests/CMakeLists.txt; brought down even when the test fails)
# set up to show it: no kill_invalid_depend, no accounting, a short MinJobAge, and a Prolog that
# fails the train job on demand.
# - Blocked: with the per-job --kill-on-invalid-dep=yes turned off, after a failed stage its
#   child pends with Reason=DependencyNeverSatisfied and its grandchild with Reason=Dependency.
#   `status` shows both "blocked: <stage> failed", cancels them, and nothing stays queued.
# - Forgotten: a stage Slurm has forgotten (MinJobAge) and that left no outcome record is not a
#   failed one. It completed if the next stage pends for a reason other than its dependency; with
#   nothing after it `status` says "unknown" (exit 3); either way nothing is cancelled.
# - Held: a batch job whose launch fails (here its Prolog) is requeued held by Slurm ("launch
#   failed requeued held"); `status` says held and why (exit 4) and `watch` ends.
# - Recorded outcomes: every stage's job records how it ended in the run directory, and what
#   Slurm has forgotten is read from there (docs/chain.md, "How a stage ended"). Read only after
#   Slurm forgot every job (no status before): a chain that succeeded says succeeded (exit 0);
#   one whose train failed says failed with train's exit code (exit 1); a stage whose node was
#   killed mid-stage (it could not record its end) says unknown, with the node, its log's last
#   line and what to run. `watch` and `list` started then say the same; `logs` shows the state.
#   Run beside the sections above so that their waits for Slurm to forget overlap.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"

export TRNSLURM_DEPENDENCY_PARAMETERS="" TRNSLURM_MIN_JOB_AGE=15 TRNSLURM_PROLOG=$work/prolog
# The Prolog fails the train stage of the chain named in $work/fail-train, if any.
cat >"$TRNSLURM_PROLOG" <<PROLOG
#!/bin/sh
[ -s "$work/fail-train" ] && [ "\$SLURM_JOB_COMMENT" = "trnslurm:\$(cat "$work/fail-train"):train" ] && exit 1
exit 0
PROLOG
chmod +x "$TRNSLURM_PROLOG"
trap '"$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" down >/dev/null 2>&1 || true' EXIT
"$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" up >/dev/null
eval "$("$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" env)"
checks=$((checks + 1))
! grep -q '^DependencyParameters' "$TRNSLURM_CLUSTER_DIR/etc/slurm.conf" || fail "kill_invalid_depend still set"

# The id of stage $2 of chain $1, as submit recorded it.
job_of() { awk -v s="$2" '$1 == "job" && $2 == s { print $3 }' "runs/$1/journal"; }

# --- Blocked -------------------------------------------------------------------------------
capture "$trn" submit --samples 1000 --set 'stages.convert.command=exit 4' --sbatch-arg=--kill-on-invalid-dep=no
expect_eq "submit exit code" 0 "$rc"
c=$(chain_of "$out")
# Wait until Slurm has given up on the child: DependencyNeverSatisfied.
deadline=$((SECONDS + 30))
until squeue -h -n "trn-$c-precompile" -o %r | grep -q DependencyNeverSatisfied; do
  [ $SECONDS -lt $deadline ] || fail "precompile never became DependencyNeverSatisfied: $(chain_jobs "$c")"
  sleep 0.2
done
expect_eq "grandchildren still pending before status" 2 \
  "$(squeue -h -t pending -n "trn-$c-train,trn-$c-convert_back" -o %i | wc -l)"
expect_contains "train waits on its parent only" "Dependency" "$(squeue -h -n "trn-$c-train" -o %r)"

capture "$trn" status "$c"
expect_eq "status exit code" 1 "$rc"
expect_contains "status names the failed stage" "failed: convert failed" "$out"
for s in precompile train convert_back; do
  expect_contains "$s blocked" "blocked: convert failed" "$(grep " $s " <<<"$out")"
done
expect_contains "exit code of convert" " 4" "$(grep ' convert ' <<<"$out")"
# status cancelled them: nothing of the chain is left pending forever.
deadline=$((SECONDS + 15))
while [ -n "$(active_jobs "$c")" ]; do
  [ $SECONDS -lt $deadline ] || fail "blocked stages still queued after status: $(chain_jobs "$c")"
  sleep 0.2
done
expect_eq "no job left" "" "$(active_jobs "$c")"
expect_eq "blocked stages cancelled" 3 "$(chain_jobs "$c" | grep -c ' CANCELLED$' || true)"

# --- Recorded outcomes: the chains ---------------------------------------------------------
capture "$trn" submit --samples 1000
expect_eq "submit of the succeeding chain" 0 "$rc"
ok=$(chain_of "$out")
capture "$trn" submit --samples 1000 --set 'stages.train.command=echo "train gives up"; exit 3'
expect_eq "submit of the chain whose train fails" 0 "$rc"
bad=$(chain_of "$out")
capture "$trn" submit --samples 1000 --only convert --sbatch-arg=--no-requeue \
  --set 'stages.convert.command=echo "converting shard 7"; sleep 600'
expect_eq "submit of the chain whose node dies" 0 "$rc"
lost=$(chain_of "$out")
lost_id=$(job_of "$lost" convert)
# Both other chains end before the node goes: nothing of theirs runs on it.
deadline=$((SECONDS + 60))
while [ -n "$(active_jobs "$ok")$(active_jobs "$bad")" ]; do
  [ $SECONDS -lt $deadline ] || fail "chains still queued after 60 s: $(chain_jobs "$ok") $(chain_jobs "$bad")"
  sleep 0.3
done
deadline=$((SECONDS + 30))
until grep -q "converting shard 7" "runs/$lost/logs/convert-$lost_id.out" 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "convert of $lost never started: $(chain_jobs "$lost")"
  sleep 0.2
done
lost_node=$(squeue -h -j "$lost_id" -o %B)
"$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" kill-node "$lost_node"
deadline=$((SECONDS + 60))
until [ "$(squeue -h -t all -j "$lost_id" -o %T 2>/dev/null)" = NODE_FAIL ]; do
  [ $SECONDS -lt $deadline ] || fail "convert of $lost not NODE_FAIL after 60 s: $(chain_jobs "$lost")"
  sleep 0.5
done
"$TRNSLURM_SOURCE_DIR/scripts/dev-cluster" revive-node "$lost_node"

# --- Forgotten -----------------------------------------------------------------------------
# Chain a: precompile may only start in 10 minutes (as if it waited that long for nodes).
# Chain b: convert alone. Each convert completes and, MinJobAge later, Slurm forgets it before
# anyone ran status.
capture "$trn" submit --samples 1000 --stage-arg=precompile=--begin=now+600
expect_eq "submit of chain a" 0 "$rc"
a=$(chain_of "$out")
capture "$trn" submit --samples 1000 --only convert
expect_eq "submit of chain b" 0 "$rc"
b=$(chain_of "$out")
for x in "$a" "$b"; do
  id=$(job_of "$x" convert)
  deadline=$((SECONDS + 90))
  while squeue -h -j "$id" -o %i >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "Slurm still knows convert ($id) after 90 s: $(chain_jobs "$x")"
    sleep 1
  done
done
expect_eq "precompile of a waits for its begin time" "PENDING BeginTime" "$(squeue -h -n "trn-$a-precompile" -o '%T %r')"
# What the stages after them show is read only when the job left no outcome record (a job killed
# before it could write one, a chain submitted by a trnslurm without them): removed here.
rm "runs/$a"/outcomes/convert.*.json "runs/$b"/outcomes/convert.*.json
capture "$trn" status "$a"
expect_eq "status of a: still running, exit 3" 3 "$rc"
expect_contains "a: convert completed, since precompile became eligible" \
  "forgotten by Slurm; completed: precompile became eligible after it" "$(grep ' convert ' <<<"$out")"
expect_eq "status of a cancelled nothing" 3 "$(active_jobs "$a" | wc -l)"
capture "$trn" status "$b"
expect_eq "status of b: unknown, exit 3" 3 "$rc"
expect_contains "b: the verdict says unknown" "unknown: how convert ended is not known" "$out"
capture "$trn" status "$b" --json
expect_contains "b: --json verdict unknown" '"verdict": "unknown"' "$out"
# a goes on and succeeds.
scontrol update "jobid=$(job_of "$a" precompile)" StartTime=now
expect_eq "chain a completes" 0 "$(wait_chain "$a" 90)"
expect_eq "a: stages ran" "convert precompile train convert_back" "$(tr '\n' ' ' <"runs/$a/order" | sed 's/ $//')"

# --- Held ----------------------------------------------------------------------------------
capture "$trn" submit --samples 1000 --set 'stages.precompile.command=sleep 2'
expect_eq "submit for the held train" 0 "$rc"
c=$(chain_of "$out")
echo "$c" >"$work/fail-train"
train=$(job_of "$c" train)
deadline=$((SECONDS + 60))
until squeue -h -j "$train" -o %r | grep -q held; do
  [ $SECONDS -lt $deadline ] || fail "train ($train) never held: $(squeue -h -j "$train" -o '%T %r')"
  sleep 0.5
done
# What Slurm 22.05 shows of it: the state and reason status reads.
expect_eq "Slurm's view of the held train" "PENDING launch failed requeued held" "$(squeue -h -j "$train" -o '%T %r')"
capture "$trn" status "$c"
expect_eq "status of a held chain: exit 4" 4 "$rc"
expect_contains "train is held, and why" "held (launch failed requeued held): 'scontrol release $train'" \
  "$(grep ' train ' <<<"$out")"
expect_contains "the verdict says held" "held: train held" "$(tail -n 1 <<<"$out")"
capture timeout 30 "$trn" watch "$c" --interval 0.2
expect_eq "watch of a held chain ends, exit 4" 4 "$rc"
capture "$trn" cancel "$c"
expect_eq "cancel of the held chain" 0 "$rc"
expect_eq "no job of the held chain left" "" "$(active_jobs "$c")"

# --- Recorded outcomes: read once Slurm has forgotten every job ------------------------------
for x in "$ok" "$bad" "$lost"; do
  for id in $(awk '$1 == "job" { print $3 }' "runs/$x/journal"); do
    deadline=$((SECONDS + 120))
    while squeue -h -j "$id" -o %i >/dev/null 2>&1; do
      [ $SECONDS -lt $deadline ] || fail "Slurm still knows job $id of $x after 120 s: $(chain_jobs "$x")"
      sleep 1
    done
  done
done
expect_eq "records: one per job, owned by the job's user (the submitter)" "4 $(stat -c %U "runs/$ok/manifest.json")" \
  "$(stat -c %U "runs/$ok"/outcomes/*.json | uniq -c | awk '{ print $1, $2 }')"
capture "$trn" status "$ok"
expect_eq "succeeded chain: exit 0" 0 "$rc"
expect_contains "succeeded chain: the verdict" "succeeded" "$(tail -n 1 <<<"$out")"
expect_contains "succeeded chain: train read from its record" "the job recorded exit 0 on n" "$(grep ' train ' <<<"$out")"
capture "$trn" status "$ok" --json
expect_eq "succeeded chain: every stage from its record" "record record record record" \
  "$(json '" ".join(s["source"] for s in j["stages"])')"
capture "$trn" status "$bad"
expect_eq "failed chain: exit 1" 1 "$rc"
expect_match "failed chain: train FAILED with exit code 3" '^  train +[0-9]+  FAILED .* 3  forgotten by Slurm; the job recorded exit 3' "$out"
expect_contains "failed chain: convert_back never started" "blocked: train failed (never started)" "$(grep ' convert_back ' <<<"$out")"
expect_contains "failed chain: the verdict names train" "failed: train failed" "$(tail -n 1 <<<"$out")"
capture "$trn" status "$lost"
expect_eq "lost node: unknown, exit 3" 3 "$rc"
expect_contains "lost node: the attempt never recorded its end" \
  "the job started on $lost_node at" "$(grep ' convert ' <<<"$out")"
expect_contains "lost node: the log's last line" "last line of $PWD/runs/$lost/logs/convert-$lost_id.out: converting shard 7" "$out"
expect_contains "lost node: what to run" "sinfo -R -n $lost_node" "$out"
expect_contains "lost node: the verdict" "unknown: how convert ended is not known" "$(tail -n 1 <<<"$out")"
capture "$trn" status "$lost" --json
expect_eq "lost node: --json evidence" "convert converting shard 7" "$(json 'j["evidence"]["stage"] + " " + j["evidence"]["last_log_line"]')"
# watch and list, started after the chains ended, say the same.
for x in "ok 0" "bad 1" "lost 3"; do
  read -r name code <<<"$x"
  capture timeout 30 "$trn" watch "${!name}" --interval 0.2
  expect_eq "watch of the $name chain after it ended" "$code" "$rc"
done
capture timeout 30 "$trn" watch "$ok" "$bad" "$lost" --interval 0.2
expect_eq "watch of the three: the worst verdict" 1 "$rc"
capture "$trn" list
expect_match "list: succeeded" "^$ok .* succeeded " "$out"
expect_match "list: failed" "^$bad .* failed " "$out"
expect_match "list: unknown" "^$lost .* unknown " "$out"
capture "$trn" logs "$bad"
expect_contains "logs: the failed stage, with its state" "(stage train, job $(job_of "$bad" train), FAILED exit 3)" "$out"
expect_contains "logs: its output" "train gives up" "$out"
finish
