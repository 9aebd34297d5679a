#!/bin/bash
# The precompile stage's compile-cache guard and record (docs/cache.md). Compiled into the core
# (core/CMakeLists.txt) and spliced into the precompile job script by job_script.cpp: what lies
# between the two "trnslurm:" marker lines, with the recipe's command in place of the ":" line.
# Before the command: with --precompile=auto, a key recorded meanwhile (by the chain this one
# waited for) ends the job at once, and failed compilations an earlier precompile of the key left
# are removed (the compiler would reuse them). After it (reached only when the command succeeded,
# as the job script runs under `set -e`): a cache holding a failed compilation is not recorded as
# warm; else the key's marker is written (atomically: a reader never sees half of it). The job script
# exports what it reads: TRNSLURM_COMPILE_KEY, TRNSLURM_CACHE_MARKER, TRNSLURM_SKIP_WHEN_WARM,
# NEURON_COMPILE_CACHE_URL, TRNSLURM_CHAIN_ID. A file of its own so that shellcheck reads it.
# trnslurm: cache guard begins

# --- trnslurm compile cache (docs/cache.md) ---
if [[ $TRNSLURM_SKIP_WHEN_WARM == 1 && -f $TRNSLURM_CACHE_MARKER ]]; then
  echo "trnslurm: precompile skipped: the compile cache is warm for key $TRNSLURM_COMPILE_KEY: $(cat "$TRNSLURM_CACHE_MARKER")"
  exit 0
fi
# The graphs of the key's cache that failed to compile (model.log without model.done). Only a
# directory can be searched; for an s3:// cache the compiler's exit status stands alone.
trn_failed_graphs() {
  trn_failed=()
  [[ $NEURON_COMPILE_CACHE_URL != *://* && -d $NEURON_COMPILE_CACHE_URL ]] || return 0
  local log
  while IFS= read -r log; do
    [[ -f ${log%/model.log}/model.done ]] || trn_failed+=("${log%/model.log}")
  done < <(find "$NEURON_COMPILE_CACHE_URL" -path '*/MODULE_*/model.log')
}
# A cold key whose cache holds failures: an earlier precompile of it failed (the one this chain
# waited for, say). The compiler would reuse them without trying again, so they go first.
trn_failed_graphs
if [[ ${#trn_failed[@]} -gt 0 ]]; then
  echo "trnslurm: removing ${#trn_failed[@]} failed compilation(s) an earlier precompile of key $TRNSLURM_COMPILE_KEY left"
  rm -rf -- "${trn_failed[@]}"
fi
echo "trnslurm: compiling key $TRNSLURM_COMPILE_KEY into $NEURON_COMPILE_CACHE_URL"
:  # trnslurm: the command
trn_failed_graphs
if [[ ${#trn_failed[@]} -gt 0 ]]; then
  echo "trnslurm: precompile: ${#trn_failed[@]} graph(s) failed to compile, e.g. ${trn_failed[0]}; key $TRNSLURM_COMPILE_KEY is not recorded as warm" >&2
  echo "  hint: the compiler reuses a failed entry: 'trnslurm cache clear --key $TRNSLURM_COMPILE_KEY' (or --retry_failed_compilation in NEURON_CC_FLAGS), then submit again" >&2
  exit 1
fi
mkdir -p "${TRNSLURM_CACHE_MARKER%/*}"
printf '{"key": "%s", "chain": "%s", "job": "%s", "since": "%s", "host": "%s"}\n' \
  "$TRNSLURM_COMPILE_KEY" "$TRNSLURM_CHAIN_ID" "${SLURM_JOB_ID:-}" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  "$(hostname -s)" >"$TRNSLURM_CACHE_MARKER.$$"
mv -f "$TRNSLURM_CACHE_MARKER.$$" "$TRNSLURM_CACHE_MARKER"
echo "trnslurm: compile key $TRNSLURM_COMPILE_KEY recorded: $TRNSLURM_CACHE_MARKER"
# trnslurm: cache guard ends
