# The plugin's security claims (docs/security.md), each checked on the real cluster: values the
# user controls (options, option variables, environment) fail the job cleanly or are ignored,
# never drain a node, never forge a log line, never choose a path the plugin reads.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/plugin_lib.sh"

opt=SLURM_SPANK__SLURM_SPANK_OPTION_trnslurm
slurmd_log=$TRNSLURM_CLUSTER_DIR/log/slurmd-n1.log

# 1. An option smuggled past srun's own check: only the job's environment holds it (srun
# --export=VAR=value does not put it in srun's own environment, so srun does not check it).
# slurmstepd takes options from srun's launch request, never from the job's environment: the
# value has no effect at all, bogus or not (the tasks get the per-task split, not 4 cores each).
expect_eq "smuggled --trn-cores=bogus: ignored" "0-15 16-31" \
  "$(srun -N 1 -n 2 --export="ALL,${opt}_trn_cores=bogus" bash -c 'echo "$NEURON_RT_VISIBLE_CORES"' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "smuggled --trn-cores=4: ignored too" "0-15 16-31" \
  "$(srun -N 1 -n 2 --export="ALL,${opt}_trn_cores=4" bash -c 'echo "$NEURON_RT_VISIBLE_CORES"' | sort | tr '\n' ' ' | sed 's/ $//')"
settle "a smuggled option value"
# The same in a batch job (sbatch --export does not check it either): the batch shell is not a
# task and runs; the srun inside reads the variable, checks it and refuses, and no node drains.
jobid=$(sbatch --parsable --export="ALL,${opt}_trn_efa=sideways" -N 1 -o "$work/batch.out" \
  --wrap 'echo batch shell ran; srun true; echo "srun exit $?"')
wait_jobs "$jobid"
out=$(cat "$work/batch.out")
expect_contains "smuggled option: the batch shell ran" "batch shell ran" "$out"
expect_contains "smuggled option: the step failed" "srun exit 1" "$out"
expect_contains "smuggled option: why" "--trn-efa: invalid value 'sideways'" "$out"
settle "a smuggled option value in a batch job"

# 2. root= and state_dir= belong to the administrator: no option sets them and an option variable
# named after them is ignored (each node still reads its own fixture tree: 32 cores).
set +e
msg=$(srun -N 1 --trn-root=/tmp true 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "srun accepted --trn-root"
expect_eq "root/state_dir variables ignored" "0-31" \
  "$(srun -N 1 --export="ALL,${opt}_root=$work,${opt}_state_dir=$work,${opt}_trn_root=$work" \
    bash -c 'echo "$NEURON_RT_VISIBLE_CORES"')"

# 3. Newlines in values cannot forge a line in srun's output or in slurmd's log.
set +e
msg=$(srun -N 1 --trn-cache=$'/ok\ntrnslurm: forged line' true 2>&1)
rc=$?
set -e
expect_eq "newline in --trn-cache: refused" 255 "$rc"
# (srun itself also echoes the raw value, "Invalid --trn-cache argument: ...", to the user's own
# terminal: Slurm's line, not ours.) Ours is one line, escaped.
expect_contains "newline in --trn-cache: escaped" "trnslurm: --trn-cache: invalid compile cache '/ok\\ntrnslurm: forged line'" "$msg"
# A user's environment variable with a newline, refused in task_init (in the task's process,
# which logs to slurmd's log too): one escaped line in srun's output and in slurmd's log.
set +e
msg=$(NEURON_LOGICAL_NC_CONFIG=$'2\nerror: forged in slurmd log' srun -N 1 -w n1 true 2>&1)
rc=$?
set -e
expect_eq "newline in NEURON_LOGICAL_NC_CONFIG: the job fails" 1 "$rc"
expect_contains "newline in NEURON_LOGICAL_NC_CONFIG: escaped" \
  "NEURON_LOGICAL_NC_CONFIG='2\\nerror: forged in slurmd log' is neither 1 nor 2" "$msg"
[ "$(grep -c '^error: forged' <<<"$msg" || true)" = 0 ] || fail "a newline forged a line in srun's output: $msg"
if grep -qE '^(\[[^]]*\] )?error: forged in slurmd log' "$slurmd_log"; then
  fail "a newline forged a line in $slurmd_log"
fi
expect_contains "slurmd's log has it on one line" "2\\nerror: forged in slurmd log" "$(cat "$slurmd_log")"
settle "newlines in values"

# 4. Huge values (100 KiB: Linux allows 128 KiB per variable of an exec'd process).
big=$(head -c 100000 /dev/zero | tr '\0' 'x')
set +e
msg=$(srun -N 1 --trn-cache="/$big" true 2>&1)
rc=$?
set -e
expect_eq "100 KiB --trn-cache: refused" 255 "$rc"
expect_contains "100 KiB --trn-cache: reason" "--trn-cache: invalid compile cache '/xxx" "$msg"
# Our line is cut at 1 KiB (Slurm's own "Invalid --trn-cache argument" echo is not ours).
ours=$(grep 'trnslurm: --trn-cache' <<<"$msg")
[ "${#ours}" -lt 2048 ] || fail "a 100 KiB value made a ${#ours}-byte message line"
# A 100 KiB variable of the user's is read whole (not taken for unset) and refused in task_init.
set +e
msg=$(NEURON_LOGICAL_NC_CONFIG="2$big" srun -N 1 true 2>&1)
rc=$?
set -e
expect_eq "100 KiB NEURON_LOGICAL_NC_CONFIG: the job fails" 1 "$rc"
expect_contains "100 KiB NEURON_LOGICAL_NC_CONFIG: reason" "NEURON_LOGICAL_NC_CONFIG='2xxx" "$msg"
longest=$(grep trnslurm: <<<"$msg" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
[ "$longest" -lt 2048 ] || fail "a 100 KiB variable made a $longest-byte message line"
# A 100 KiB variable the plugin would set is the user's and left alone, and the task runs.
expect_eq "100 KiB MASTER_ADDR kept" "100001" "$(MASTER_ADDR="m$big" srun -N 1 bash -c 'echo ${#MASTER_ADDR}')"
settle "huge values"

# 5. The slurmd's EFA answer is trusted only in a root-owned directory, in a root-owned file
# nobody else can write: one owned by a user (here nobody, uid 65534) is ignored.
efa_dir=$TRNSLURM_CLUSTER_DIR/spool/n2/trnslurm
cp -p "$efa_dir/efa" "$work/efa.saved"
restore_efa() { chown 0:0 "$efa_dir" && chmod 0755 "$efa_dir" && cp -p "$work/efa.saved" "$efa_dir/efa"; }
trap restore_efa EXIT
printf 'state=present\ndetail=written by a user\n' >"$efa_dir/efa.new"
chmod 0644 "$efa_dir/efa.new"
mv "$efa_dir/efa.new" "$efa_dir/efa"
fi_provider='echo "${FI_PROVIDER-unset}"'
expect_eq "root-owned answer trusted (the check can fail)" "efa" "$(srun -N 1 -w n2 bash -c "$fi_provider")"
chown 65534:65534 "$efa_dir/efa"
expect_eq "user-owned EFA file ignored" "unset" "$(srun -N 1 -w n2 bash -c "$fi_provider")"
expect_contains "and says why" "not owned by root or writable by others: not trusted" \
  "$(srun -N 1 -w n2 --trn-verbose true 2>&1)"
chown 0:0 "$efa_dir/efa"
chown 65534:65534 "$efa_dir"
expect_eq "user-owned state_dir ignored" "unset" "$(srun -N 1 -w n2 bash -c "$fi_provider")"
restore_efa
trap - EXIT
settle "user-owned EFA state"

# 6. Jobs of an unprivileged user (nobody, uid 65534), as on a real cluster, not root's: the hooks
# that run as the user (user_init, task_init) read the node's tree and the slurmd's root-owned
# EFA answer as that user; the user can neither change that answer nor have an answer of their
# own trusted, even in their own job; their batch shell gets no task variable, its sruns do.
as_user() { (cd / && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"); }
show_user='echo "$(id -u) $NEURON_RT_VISIBLE_CORES $MASTER_ADDR ${FI_PROVIDER-unset}"'
expect_eq "a user's tasks run as the user, with the plugin's variables" "65534 0-31 127.0.0.1 unset|65534 0-31 127.0.0.1 unset" \
  "$(as_user srun -N 2 bash -c "$show_user" | sort | tr '\n' '|' | sed 's/|$//')"
set +e
as_user bash -c "echo state=present >>'$efa_dir/efa'" 2>/dev/null
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a user could write the slurmd's EFA answer"
checks=$((checks + 1))
trap restore_efa EXIT
printf 'state=present\ndetail=written by the job'"'"'s own user\n' >"$efa_dir/efa"
chown 65534:65534 "$efa_dir/efa"
expect_eq "the job's own user's EFA answer: not trusted either" "unset" \
  "$(as_user srun -N 1 -w n2 bash -c 'echo "${FI_PROVIDER-unset}"')"
restore_efa
trap - EXIT
chmod 711 "$work"
mkdir -m 700 "$work/user"
chown 65534:65534 "$work/user"
job=$(as_user sbatch --parsable -N 2 -o "$work/user/batch.out" \
  --wrap "echo \"batch \$(id -u) \${NEURON_RT_VISIBLE_CORES-unset}\"; srun -N 2 bash -c '$show_user'")
wait_jobs "$job"
expect_eq "a user's batch job" "65534 0-31 127.0.0.1 unset|65534 0-31 127.0.0.1 unset|batch 65534 unset" \
  "$(grep -v '^srun: ' "$work/user/batch.out" | sort | tr '\n' '|' | sed 's/|$//')"
settle "a user's jobs"

# 7. slurmctld is not root either (scripts/dev-cluster: SlurmUser, `slurm` where the account exists).
slurm_user=$(scontrol show config | sed -n 's/^SlurmUser *= *\([^(]*\).*/\1/p')
expect_eq "slurmctld runs as SlurmUser" "$slurm_user" \
  "$(ps -o user= -p "$(cat "$TRNSLURM_CLUSTER_DIR/run/slurmctld.pid")")"
if id -u slurm >/dev/null 2>&1 && [ -z "${TRNSLURM_SLURM_USER:-}" ]; then
  expect_eq "SlurmUser where the slurm account exists" slurm "$slurm_user"
fi
finish
