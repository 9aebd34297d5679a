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
