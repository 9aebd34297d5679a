# A stand-in for squeue and sacct, for tests and benchmarks of status without a cluster. Source
# it, then `fake_squeue DIR`: puts DIR/bin first on PATH; `fake_state ID STATE` sets what squeue
# says of job ID (every other id: forgotten, and sacct has no accounting).
# shellcheck disable=SC2034  # fake_dir: read by the sourcing script
fake_squeue() {
  fake_dir=$1
  mkdir -p "$fake_dir/bin"
  : >"$fake_dir/states"
  cat >"$fake_dir/bin/squeue" <<'SH'
#!/bin/bash
# squeue -h -t all -j IDS -O FORMAT: one '|'-separated row per known id.
ids=""
while [ $# -gt 0 ]; do
  case $1 in -j) ids=$2; shift 2 ;; *) shift ;; esac
done
IFS=, read -r -a wanted <<<"$ids"
for id in "${wanted[@]}"; do
  state=$(awk -v id="$id" '$1 == id {print $2}' "$(dirname "$0")/../states")
  [ -n "$state" ] && printf '%s|%s|None|1:00|2|n[1-2]|0:0|trn-x|trnslurm:x\n' "$id" "$state"
done
exit 0
SH
  printf '#!/bin/sh\nexit 1\n' >"$fake_dir/bin/sacct"
  chmod +x "$fake_dir/bin/squeue" "$fake_dir/bin/sacct"
  PATH=$fake_dir/bin:$PATH
}

fake_state() {
  awk -v id="$1" '$1 != id' "$fake_dir/states" >"$fake_dir/states.new"
  printf '%s %s\n' "$1" "$2" >>"$fake_dir/states.new"
  mv "$fake_dir/states.new" "$fake_dir/states"
}
