# Shared by the test_chain_*.sh tests (source after lib.sh): a work directory holding the test
# recipe (tests/fixtures/chain/chain.toml) as ./trnslurm.toml, and helpers around `trnslurm`.
# shellcheck disable=SC2034,SC2154  # work (lib.sh) in; out, ...: for the tests that source this file
cp "$TRNSLURM_SOURCE_DIR/tests/fixtures/chain/chain.toml" "$work/trnslurm.toml"
cd "$work"
trn=$(trnslurm_as_test_user)  # lib.sh: the chains run as an unprivileged user

# The chain id `submit` printed ("chain ID submitted" or "... not submitted").
chain_of() { sed -n 's/^\(trnslurm: \)\{0,1\}chain \([0-9a-f-]*\) .*/\2/p' <<<"$1" | head -n 1; }

# The jobs of a chain still pending or running, found by their names (Slurm alone).
active_jobs() {
  local c=$1
  squeue -h -t pending,running,configuring,completing,suspended \
    -n "trn-$c-convert,trn-$c-precompile,trn-$c-train,trn-$c-convert_back" -o %i
}

# Every job of a chain Slurm knows, any state: "ID NAME STATE" sorted by id.
chain_jobs() {
  local c=$1
  squeue -h -t all -n "trn-$c-convert,trn-$c-precompile,trn-$c-train,trn-$c-convert_back" -o '%i %j %T' | sort -n
}

# The run directory `submit` printed.
run_of() { sed -n 's/^run directory //p' <<<"$1" | head -n 1; }

# A value the job script of a chain's stage exports (TRNSLURM_CHECKPOINT_DIR, ...): where the
# chain really writes, whatever the recipe's defaults resolve to.
stage_export() {  # RUN_DIR STAGE NAME
  sed -n "s/^export $3='\\(.*\\)'\$/\\1/p" "$1/$2.sh" | head -n 1
}

# A test that fails half-way must not leave its chain running into the next test (the workers'
# MASTER_PORT is the same for every job); and CI's log keeps only the test's output, so a failed
# test prints first what its chain did: the status and the tail of each train log (restarts too).
cancel_chain() {
  local test_rc=$? log
  [ -n "${chain:-}" ] || return 0
  if [ "$test_rc" != 0 ]; then
    {
      echo "--- what chain $chain did (the test failed):"
      "$trn" status "$chain" 2>&1 || true
      for log in "${run:-/nonexistent}"/logs/train*; do
        [ -f "$log" ] || continue
        echo "--- ${log#"$run"/}, last 25 lines:"
        tail -n 25 "$log" || true
      done
    } >&2
  fi
  "$trn" cancel "$chain" >/dev/null 2>&1 || true
}

# Polls `trnslurm status CHAIN` until it stops saying "running" (exit 3), LIMIT seconds at most
# (default 60); prints its exit code.
wait_chain() {  # CHAIN [LIMIT]
  local limit=${2:-60} rc
  local deadline=$((SECONDS + limit))
  while :; do
    set +e
    "$trn" status "$1" >/dev/null 2>&1
    rc=$?
    set -e
    [ "$rc" != 3 ] && break
    [ $SECONDS -lt $deadline ] || fail "chain $1 still running after $limit s"
    sleep 0.3
  done
  echo "$rc"
}

# Runs a command, capturing stdout+stderr in $out and the exit code in $rc.
capture() {
  set +e
  out=$("$@" 2>&1)
  rc=$?
  set -e
}
