# The .deb: built by CPack from this build, installed with apt (its dependencies are Debian's
# runtime packages), then a local cluster run from the installed files only, then purged.
set -euo pipefail
: "${TRNSLURM_BUILD_DIR:?run through ctest}"
work=$(mktemp -d)
# The cluster's slurmctld runs as the slurm account (scripts/dev-cluster), which must enter it.
chmod 711 "$work"
cluster=$work/cluster
checks=0
cleanup() {
  /usr/share/trnslurm/scripts/dev-cluster down --dir "$cluster" >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq trnslurm >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}
check() {  # check WHAT COMMAND...
  local what=$1
  shift
  checks=$((checks + 1))
  "$@" || fail "$what"
}

cpack -G DEB --config "$TRNSLURM_BUILD_DIR/CPackConfig.cmake" -B "$work/pkg" >/dev/null
deb=$(ls "$work"/pkg/trnslurm_*_amd64.deb)
check "the package declares its Slurm" sh -c "dpkg-deb -f '$deb' Depends | grep -q 'slurm-client (>= '"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >/dev/null

plugin_dir=$(dpkg -L trnslurm | grep '/trnslurm.so$')
check "trnslurm on PATH" sh -c "command -v trnslurm | grep -qx /usr/bin/trnslurm"
check "trnslurm --version" sh -c "trnslurm --version | grep -q '^trnslurm '"
check "plugin in Slurm's plugin directory" test -f /usr/lib/x86_64-linux-gnu/slurm-wlm/trnslurm.so
check "plugstack snippet names the installed plugin" \
  grep -qx "required $plugin_dir" /etc/slurm/plugstack.conf.d/trnslurm.conf
check "snippet is a conffile" sh -c "dpkg-query -W -f='\${Conffiles}' trnslurm | grep -q plugstack.conf.d/trnslurm.conf"
check "CPU backend installed" test -f /usr/share/trnslurm/cpu/neuronx-distributed/examples/training/llama/convert_checkpoints.py
check "the stand-in venv's tools installed executable" test -x /usr/share/trnslurm/cpu/neuron-venv/bin/neuron_parallel_compile
# tiny-cpu from the installed files: its stand-ins and venv tools are found ({{backend_dir}}), so
# the dry run warns of nothing missing.
mkdir "$work/tiny" && (cd "$work/tiny" && trnslurm init tiny-cpu >/dev/null &&
  /usr/bin/python3 /usr/share/trnslurm/cpu/make_nxd_inputs.py --recipe trnslurm.toml >/dev/null &&
  trnslurm submit --dry-run >/dev/null 2>dry-run.err) || fail "installed tiny-cpu: dry run failed: $(cat "$work/tiny/dry-run.err")"
check "installed tiny-cpu: nothing missing" sh -c "! grep -q 'not there' '$work/tiny/dry-run.err'"
for page in man1/trnslurm.1 man5/trnslurm.toml.5 man8/trnslurm-spank.8; do
  check "man page $page installed" sh -c "ls /usr/share/man/$page* >/dev/null"
done
check "man finds trnslurm-spank(8)" sh -c "man -w 8 trnslurm-spank | grep -q trnslurm-spank.8"
check "bash completion installed and completing from the installed binary" bash -c '
  source /usr/share/bash-completion/completions/trnslurm
  COMP_WORDS=(trnslurm init tiny-t); COMP_CWORD=2; _trnslurm
  [ "${COMPREPLY[*]}" = tiny-titan-cpu ]'

# A cluster from the installed files only: the installed dev-cluster, plugin and trnslurm.
/usr/share/trnslurm/scripts/dev-cluster up --dir "$cluster" --port-base "${TRNSLURM_PORT_BASE:-19817}" \
  --plugin "$plugin_dir" >"$work/up.log" 2>&1 || fail "the installed dev-cluster did not come up: $(cat "$work/up.log")"
eval "$(/usr/share/trnslurm/scripts/dev-cluster env --dir "$cluster")"
out=$(srun -N 2 bash -c 'echo "$(hostname) ${TRNSLURM_NODE_RANK-unset}"' | sort)
checks=$((checks + 1))
[ "$out" = "n1 0
n2 1" ] || fail "srun through the installed plugin saw: $out"
/usr/share/trnslurm/scripts/dev-cluster down --dir "$cluster" >/dev/null 2>&1

DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq trnslurm >/dev/null
check "purge removes the plugin" test ! -e "$plugin_dir"
check "purge removes the snippet" test ! -e /etc/slurm/plugstack.conf.d/trnslurm.conf
echo "ok: $checks checks"
