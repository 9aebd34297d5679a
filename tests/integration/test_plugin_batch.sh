# #SBATCH --trn-* options reach the sruns inside the job; the batch shell itself gets nothing;
# an explicit srun option overrides the #SBATCH one.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/plugin_lib.sh"
# Outputs are compared without srun's own notices ("step creation temporarily disabled" when
# the previous step's resources are not yet released).

cat >"$work/job.sh" <<'JOB'
#!/bin/bash
#SBATCH -N 2
#SBATCH --ntasks-per-node=2
#SBATCH --trn-cores=8
#SBATCH --trn-root-comm=48620
echo "batch ${NEURON_RT_VISIBLE_CORES-unset} ${MASTER_ADDR-unset} ${NEURON_RT_ROOT_COMM_ID-unset}"
srun bash -c 'echo "step $SLURM_PROCID $NEURON_RT_VISIBLE_CORES $NEURON_RT_ROOT_COMM_ID"'
srun -n 2 --ntasks-per-node=1 --trn-cores=per-node bash -c 'echo "pernode $SLURM_PROCID $NEURON_RT_VISIBLE_CORES"'
JOB
job=$(sbatch --parsable -o "$work/job.out" "$work/job.sh")
wait_jobs "$job"
expect_eq "batch job output" "batch unset unset unset
pernode 0 0-31
pernode 1 0-31
step 0 0-7 127.0.0.1:48620
step 1 8-15 127.0.0.1:48620
step 2 0-7 127.0.0.1:48620
step 3 8-15 127.0.0.1:48620" "$(grep -v '^srun: ' "$work/job.out" | sort)"

cat >"$work/off.sh" <<'JOB'
#!/bin/bash
#SBATCH -N 2
#SBATCH --trn-env=off
srun -N 2 bash -c 'echo "off ${MASTER_ADDR-unset} ${NEURON_RT_NUM_CORES-unset}"'
srun -N 2 --trn-env=on bash -c 'echo "on ${NEURON_RT_NUM_CORES-unset}"'
JOB
job2=$(sbatch --parsable -o "$work/off.out" "$work/off.sh")
wait_jobs "$job2"
expect_eq "#SBATCH --trn-env=off" "off unset unset
off unset unset
on 32
on 32" "$(grep -v '^srun: ' "$work/off.out" | sort)"

# MASTER_ADDR is decided once per job, by the batch step (on the job's first node), not on every
# node of every step: the steps whose first node is the job's take it from there; a step that
# starts on another node decides its own.
cat >"$work/master.sh" <<'JOB'
#!/bin/bash
#SBATCH -N 2
why='s/.*: \(MASTER_ADDR=.*\)/\1/p'
srun -N 2 --trn-verbose true 2>&1 | sed -n "$why" | sort | uniq -c | sed 's/^ *//'
srun -N 1 -w n2 --trn-verbose true 2>&1 | sed -n "$why"
JOB
job4=$(sbatch --parsable -o "$work/master.out" "$work/master.sh")
wait_jobs "$job4"
expect_eq "MASTER_ADDR decided once for the job" "2 MASTER_ADDR=127.0.0.1 (first node of the step, decided once for the job by its batch step (TRNSLURM_JOB_MASTER): Slurm's NodeAddr for n1)
MASTER_ADDR=127.0.0.1 (first node of the step, Slurm's NodeAddr for n2)" "$(grep -v '^srun: ' "$work/master.out")"

# A refused task inside a batch job fails the job, not the node.
cat >"$work/refused.sh" <<'JOB'
#!/bin/bash
#SBATCH -N 1
#SBATCH -n 3
#SBATCH --trn-cores=16
srun true
JOB
job3=$(sbatch --parsable -o "$work/refused.out" "$work/refused.sh")
wait_jobs "$job3"
expect_contains "refused step's message" "need 48 NeuronCores, but this node has 32" "$(cat "$work/refused.out")"
settle "batch jobs"
finish
