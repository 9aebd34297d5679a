#!/usr/bin/env bash
# AWS ParallelCluster OnNodeConfigured custom action: builds trnslurm against the cluster's own
# Slurm (ParallelCluster installs it under /opt/slurm), installs the CLI and the SPANK plugin,
# and makes plugstack.conf load it. Runs on the head node and on every compute node; idempotent.
#
# Custom action arguments (docs/parallelcluster.md):
#   --source DIR|s3://BUCKET/trnslurm.tar.gz   trnslurm sources (shared storage or S3)
#   --plugstack-args "k=v ..."                 site defaults for the plugin
#   --slurm-prefix DIR                         default /opt/slurm
#   --no-deps                                  don't apt-get the build dependencies
#   --build-dir DIR                            keep the build there (e.g. on shared storage, per
#                                              instance type) so a later run only rebuilds what changed
set -euo pipefail

source_arg=""
plugstack_args=""
prefix=/opt/slurm
install_deps=1
build_dir=""
while [ $# -gt 0 ]; do
  case $1 in
  --source) source_arg=${2:?}; shift 2 ;;
  --plugstack-args) plugstack_args=${2?}; shift 2 ;;
  --slurm-prefix) prefix=${2:?}; shift 2 ;;
  --no-deps) install_deps=0; shift ;;
  --build-dir) build_dir=${2:?}; shift 2 ;;
  *) echo "on-node-configured: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$source_arg" ] || { echo "on-node-configured: --source is required" >&2; exit 2; }
log() { printf 'trnslurm custom action: %s\n' "$*"; }

[ -f "$prefix/include/slurm/spank.h" ] ||
  { echo "on-node-configured: no Slurm headers under $prefix/include (is --slurm-prefix right?)" >&2; exit 1; }
libdir=$prefix/lib
[ -d "$prefix/lib64" ] && [ ! -e "$libdir/libslurm.so" ] && libdir=$prefix/lib64
plugin_dir=$libdir/slurm
confdir=$prefix/etc

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case $source_arg in
s3://*)
  aws s3 cp "$source_arg" "$work/src.tar.gz"
  mkdir "$work/src"
  tar -xzf "$work/src.tar.gz" -C "$work/src" --strip-components=1
  src=$work/src
  ;;
*) src=$(cd "$source_arg" && pwd) ;;
esac

build=${build_dir:-$work/build}

if [ "$install_deps" = 1 ]; then
  command -v apt-get >/dev/null ||
    { echo "on-node-configured: only Debian/Ubuntu AMIs are supported (apt-get not found)" >&2; exit 1; }
  "$src/scripts/install-deps"
fi

# Every node builds at boot: the core is compiled as a few unity files (the CLI's command files
# never are: cli/CMakeLists.txt): core and plugin then take 187 CPU-s to build, not 398 (docs/parallelcluster.md).
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTRNSLURM_BUILD_TESTS=OFF -DCMAKE_UNITY_BUILD=ON \
  -DTRNSLURM_BUILD_BENCH=OFF -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_INSTALL_PREFIX="${TRNSLURM_INSTALL_PREFIX:-/usr/local}" \
  -DTRNSLURM_PLUGIN_DIR="$plugin_dir" -DTRNSLURM_SLURM_CONFDIR="$confdir" >"$work/cmake.log" ||
  { cat "$work/cmake.log" >&2; exit 1; }
cmake --build "$build" -j "$(nproc)"
cmake --install "$build" >/dev/null

snippet=$confdir/plugstack.conf.d/trnslurm.conf
if [ -n "$plugstack_args" ]; then
  sed -i "s|^required \(.*trnslurm\.so\).*|required \1 $plugstack_args|" "$snippet"
fi
include="include $confdir/plugstack.conf.d/*.conf"
touch "$confdir/plugstack.conf"
grep -qxF "$include" "$confdir/plugstack.conf" || printf '%s\n' "$include" >>"$confdir/plugstack.conf"
log "plugin $plugin_dir/trnslurm.so, plugstack $confdir/plugstack.conf ($(grep -c . "$snippet") lines in the snippet)"

# slurmd reads plugstack.conf when it starts: restart it where it already runs (compute nodes).
if command -v systemctl >/dev/null && systemctl is-active --quiet slurmd 2>/dev/null; then
  systemctl restart slurmd
  log "slurmd restarted"
fi
