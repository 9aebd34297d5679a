# What the cluster benches count with sdiag; sourced by bench/chain and bench/watch-rpcs.
# slurmctld's RPC counts since the last `sdiag -r`, by message type: every RPC but sdiag's own,
# and among them the job queries (squeue's REQUEST_JOB_INFO*).
sdiag_rpcs() {
  sdiag | sed -n '/by message type/,/^$/p' | grep -v REQUEST_STATS_INFO |
    sed -n 's/.*count:\([0-9]*\).*/\1/p' | awk '{n += $1} END {print n + 0}'
}
sdiag_job_queries() {
  sdiag | sed -n '/by message type/,/^$/p' | sed -n 's/.*REQUEST_JOB_INFO[A-Z_]* .*count:\([0-9]*\).*/\1/p' |
    awk '{n += $1} END {print n + 0}'
}
