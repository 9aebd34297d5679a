# Chains never share checkpoints (issue 16, item 2), on the real cluster: two chains of one recipe
# each train into and export from a directory of their own, neither resuming from the other's
# checkpoint; `submit --resume-from CHAIN` starts a third from the first's newest checkpoint
# (hard-linked, the source left as it was); a chain still queued makes its checkpoint directory
# refused, as a source and (checkpoint.per_chain = false) as a destination, with nothing submitted.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chain_lib.sh"

# The chain test recipe with a train stage that resumes from the newest step_<n>/done of its
# checkpoint directory, as NxD's latest_if_exists does, records where it started, and writes the
# next checkpoint with its chain's id; convert_back exports the chain's id.
sed '/^\[stages\.convert\]/,$d' trnslurm.toml >recipe.head
cat recipe.head - >trnslurm.toml <<'EOF'
[stages.convert]
time = "00:02:00"
command = "echo {{stage}} >> \"$TRNSLURM_RUN_DIR/order\""

[stages.precompile]
time = "00:02:00"
command = "echo {{stage}} >> \"$TRNSLURM_RUN_DIR/order\""

[stages.train]
time = "00:02:00"
signal_grace = 30
command = """
echo {{stage}} >> "$TRNSLURM_RUN_DIR/order"
n=$(find {{checkpoint_dir}} -mindepth 2 -maxdepth 2 -path '*/step_*/done' -printf '%h\\n' 2>/dev/null | sed 's|.*/step_||' | sort -n | tail -n 1)
echo "${n:-none}" >"$TRNSLURM_RUN_DIR/started_at"
next=$((${n:-0} + 10))
mkdir -p {{checkpoint_dir}}/step_$next/model
echo {{chain_id}} >{{checkpoint_dir}}/step_$next/model/by
echo 1 >{{checkpoint_dir}}/step_$next/done
"""

[stages.convert_back]
time = "00:02:00"
command = """
echo {{stage}} >> "$TRNSLURM_RUN_DIR/order"
mkdir -p {{export_dir}}
echo {{chain_id}} >{{export_dir}}/by
"""
EOF

# Two chains at once.
capture "$trn" submit --samples 1000
expect_eq "submit A" 0 "$rc"
a=$(chain_of "$out")
expect_contains "submit prints the chain's checkpoint directory" "checkpoints $work/checkpoints/$a" "$out"
capture "$trn" submit --samples 1000
expect_eq "submit B" 0 "$rc"
b=$(chain_of "$out")
expect_eq "chain A" 0 "$(wait_chain "$a")"
expect_eq "chain B" 0 "$(wait_chain "$b")"
for c in "$a" "$b"; do
  expect_eq "chain $c started from nothing (no other chain's checkpoint)" none "$(cat "runs/$c/started_at")"
  expect_eq "chain $c's checkpoint is its own" "$c" "$(cat "checkpoints/$c/step_10/model/by")"
  expect_eq "chain $c exported its own weights" "$c" "$(cat "export/$c/by")"
done
# The chains ran as the test user (lib.sh), not as root: their jobs, the files they wrote, the
# run directory and the checkpoint directory's mark that submit wrote.
expect_eq "chain A's jobs ran as" "$test_user" "$(squeue -h -t all -n "trn-$a-train" -o %u | sort -u)"
expect_eq "owner of chain A's run directory, checkpoint, mark and export" "$test_user" \
  "$(stat -c %U "runs/$a" "checkpoints/$a/step_10/model/by" "checkpoints/$a/.trnslurm-chain" "export/$a/by" | sort -u)"
expect_eq "the recipe's directories hold only chains' directories" "" \
  "$(find checkpoints export -mindepth 1 -maxdepth 1 ! -name '2*' | sort | tr '\n' ' ')"
capture "$trn" status "$a"
expect_contains "status shows the checkpoint directory" "checkpoints $work/checkpoints/$a" "$out"
capture "$trn" status "$a" --json
expect_eq "status --json checkpoint_dir" "$work/checkpoints/$a" "$(json 'j["checkpoint_dir"]')"
expect_contains "list shows the checkpoint directory" "$work/checkpoints/$b" "$("$trn" list | grep "^$b")"

# A chain still queued: its checkpoint directory is refused as a source, nothing submitted.
capture "$trn" submit --samples 1000 --sbatch-arg=--hold
expect_eq "submit a held chain" 0 "$rc"
held=$(chain_of "$out")
runs_before=$(ls runs | wc -l)
capture "$trn" submit --samples 1000 --resume-from "$held"
expect_eq "--resume-from a queued chain: exit code" 2 "$rc"
expect_contains "--resume-from a queued chain: message" "in use by chain $held" "$out"
capture "$trn" submit --samples 1000 --resume-from "$work/checkpoints/$held"
expect_eq "--resume-from a queued chain's directory: exit code" 2 "$rc"
expect_contains "--resume-from a queued chain's directory: message" "in use by chain $held" "$out"
capture "$trn" submit --samples 1000 --resume-from "$work/export"
expect_eq "--resume-from a directory without a checkpoint: exit code" 2 "$rc"
expect_contains "--resume-from without a checkpoint: message" "no completed checkpoint" "$out"
# Shared directories (per_chain = false): a second chain is refused the directory the first writes.
capture "$trn" submit --samples 1000 --set checkpoint.per_chain=false --sbatch-arg=--hold
expect_eq "submit a held chain with shared directories" 0 "$rc"
shared=$(chain_of "$out")
expect_eq "the shared directory is marked" "$shared" \
  "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["chain_id"])' checkpoints/.trnslurm-chain)"
capture "$trn" submit --samples 1000 --set checkpoint.per_chain=false
expect_eq "a second chain in the shared directory: exit code" 2 "$rc"
expect_contains "a second chain in the shared directory: message" "in use by chain $shared" "$out"
expect_eq "refused submits created no run directory (and so submitted nothing)" "$((runs_before + 1))" \
  "$(ls runs | wc -l)"
"$trn" cancel "$held" >/dev/null
"$trn" cancel "$shared" >/dev/null

# Resumed from A: no convert stage; train starts from A's step 10, hard-linked, and writes its own.
capture "$trn" submit --samples 1000 --resume-from "$a"
expect_eq "submit --resume-from A" 0 "$rc"
expect_contains "submit says where it resumes from" "resuming from step 10 of $work/checkpoints/$a" "$out"
r=$(chain_of "$out")
expect_eq "resumed chain" 0 "$(wait_chain "$r")"
expect_eq "resumed chain's stages" "precompile train convert_back" "$(tr '\n' ' ' <"runs/$r/order" | sed 's/ $//')"
expect_eq "resumed train started at A's newest checkpoint" 10 "$(cat "runs/$r/started_at")"
expect_eq "resumed chain's next checkpoint is its own" "$r" "$(cat "checkpoints/$r/step_20/model/by")"
expect_eq "A's checkpoint hard-linked, not copied" "$(stat -c %i "checkpoints/$a/step_10/model/by")" \
  "$(stat -c %i "checkpoints/$r/step_10/model/by")"
expect_eq "A's directory unchanged" "step_10" "$(cd "checkpoints/$a" && echo step_*)"
capture "$trn" status "$r"
expect_contains "status shows where the chain resumed from" "(resumed from $work/checkpoints/$a)" "$out"
expect_nodes_idle "the chain directory tests"
finish
