# The ParallelCluster custom action against a Slurm laid out as ParallelCluster lays it out
# (/opt/slurm/{include,lib,lib/slurm,etc}), made here from Debian's Slurm: it builds, installs
# the plugin into that Slurm's plugin directory, writes the snippet with the site arguments,
# includes it from plugstack.conf exactly once however often it runs.
set -euo pipefail
: "${TRNSLURM_SOURCE_DIR:?run through ctest}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}
prefix=$work/opt/slurm
mkdir -p "$prefix"/{include,lib/slurm,etc}
ln -s /usr/include/slurm "$prefix/include/slurm"
ln -s /usr/lib/x86_64-linux-gnu/libslurm.so "$prefix/lib/libslurm.so"
touch "$prefix/lib/slurm/select_cons_tres.so"
echo "optional /some/other/plugin.so" >"$prefix/etc/plugstack.conf"

for run in 1 2; do
  TRNSLURM_INSTALL_PREFIX=$work/usr "$TRNSLURM_SOURCE_DIR/scripts/pcluster/on-node-configured.sh" \
    --source "$TRNSLURM_SOURCE_DIR" --slurm-prefix "$prefix" --no-deps --plugstack-args "efa=off" \
    --build-dir "$work/build" \
    >"$work/run$run.log" 2>&1 || { cat "$work/run$run.log"; fail "run $run failed"; }
done
plugin=$prefix/lib/slurm/trnslurm.so
[ -f "$plugin" ] || fail "plugin not in the cluster's plugin directory"
nm -D --defined-only "$plugin" | grep -w slurm_spank_task_init >/dev/null || fail "installed plugin exports no SPANK hook"
[ -x "$work/usr/bin/trnslurm" ] || fail "trnslurm not installed"
grep -qx "required $plugin efa=off" "$prefix/etc/plugstack.conf.d/trnslurm.conf" ||
  fail "snippet: $(cat "$prefix/etc/plugstack.conf.d/trnslurm.conf")"
[ "$(grep -c 'plugstack.conf.d' "$prefix/etc/plugstack.conf")" = 1 ] || fail "include not added exactly once"
grep -qx "optional /some/other/plugin.so" "$prefix/etc/plugstack.conf" || fail "existing plugstack lines lost"
if "$TRNSLURM_SOURCE_DIR/scripts/pcluster/on-node-configured.sh" --source "$TRNSLURM_SOURCE_DIR" \
  --slurm-prefix "$work/nowhere" --no-deps >/dev/null 2>&1; then
  fail "a prefix without Slurm headers was accepted"
fi
echo "ok: custom action installs into a ParallelCluster-style Slurm, idempotent"
