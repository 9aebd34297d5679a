# The plugin, loaded by real srun/sbatch/slurmstepd on a two-node cluster: what each task sees.
source "$(dirname "$0")/lib.sh"

# Two nodes, two tasks each: every task reports its host and what the plugin set.
out=$(srun -N 2 --ntasks-per-node=2 --kill-on-bad-exit=1 \
  bash -c 'printf "%s %s %s\n" "$SLURM_PROCID" "$(hostname)" "${TRNSLURM_NODE_RANK-unset}"' | sort -n)
expect_eq "tasks seen on two nodes" "0 n1 0
1 n1 0
2 n2 1
3 n2 1" "$out"

# Its option is advertised by both front ends.
expect_contains "srun --help" "--trn-env=on|off" "$(srun --help)"
expect_contains "sbatch --help" "--trn-env=on|off" "$(sbatch --help)"

# --trn-env=off touches nothing.
out=$(srun -N 2 --trn-env=off bash -c 'echo "${TRNSLURM_NODE_RANK-unset}"' | sort -u)
expect_eq "--trn-env=off" "unset" "$out"

# What the user set wins over the plugin.
out=$(TRNSLURM_NODE_RANK=mine srun -N 2 --export=ALL bash -c 'echo "$TRNSLURM_NODE_RANK"' | sort -u)
expect_eq "user value kept" "mine" "$out"

# A bad value refuses the submission with the plugin's message and drains nothing.
set +e
msg=$(srun -N 2 --trn-env=maybe true 2>&1)
rc=$?
set -e
expect_eq "srun exit code on a bad value" 255 "$rc"
expect_contains "srun message on a bad value" "trnslurm: --trn-env: invalid value 'maybe'" "$msg"
set +e
msg=$(sbatch --trn-env=maybe --wrap true 2>&1)
rc=$?
set -e
expect_eq "sbatch exit code on a bad value" 255 "$rc"
expect_contains "sbatch message on a bad value" "invalid value 'maybe'" "$msg"
expect_nodes_idle "bad option values"

# A batch script's #SBATCH option reaches the sruns inside it; the batch shell itself gets nothing.
cat >"$work/job.sh" <<'JOB'
#!/bin/bash
#SBATCH -N 2
#SBATCH --trn-env=off
echo "batch ${TRNSLURM_NODE_RANK-unset}"
srun -N 2 bash -c 'echo "off ${TRNSLURM_NODE_RANK-unset}"'
srun -N 2 --trn-env=on bash -c 'echo "on ${TRNSLURM_NODE_RANK-unset}"'
JOB
job=$(sbatch --parsable -o "$work/job.out" "$work/job.sh")
wait_jobs "$job"
expect_eq "batch job output" "batch unset
off unset
off unset
on 0
on 1" "$(sort "$work/job.out")"
expect_nodes_idle "batch job"
finish
