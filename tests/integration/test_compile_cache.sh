# The compile cache on the two-node cluster (docs/cache.md), with tiny-cpu's precompile stage run
# by the CPU stand-in of neuron_parallel_compile: a precompile records its compile key; a second
# chain of the same recipe, and one with another learning rate, skip the precompile (status says
# so); another TP compiles; two chains of one key submitted back to back compile once; a failed
# precompile records no key, and the chain that waited for it compiles itself; a chain without a
# precompile makes its train wait for another chain's compile of its key. Only precompile
# jobs run (the skipping chains' train jobs are held, then cancelled): about two compiles' time.
source "$(dirname "$0")/lib.sh"
T=${TRNSLURM_BIN:?}
py=/usr/bin/python3
cd "$work"

"$T" init tiny-cpu >/dev/null
"$py" "$TRNSLURM_SOURCE_DIR/scripts/cpu/make_nxd_inputs.py" --recipe trnslurm.toml >/dev/null
# The chains, the cache's records and its lock are an unprivileged user's (lib.sh).
T=$(trnslurm_as_test_user)
export TRNSLURM_STANDIN_STRICT=1
port=$((${TRNSLURM_PORT_BASE:?} + 80))
# Chains that run side by side need rendezvous ports of their own (every node is 127.0.0.1);
# MASTER_PORT is no input of the compile key. The trainer (under neuron_parallel_compile too) loads
# the converted weights from the chain's checkpoint directory: each chain gets a directory of its
# own (ck-N, checkpoint.per_chain = false), with a copy of the weights a convert chain wrote (the
# checkpoint directory is no input of the key either).
n=0
submit() {  # submit PORT WEIGHTS ARGS...: `submit --json` in $out; WEIGHTS: a convert chain's directory, or -
  local p=$1 weights=$2 ck=$work/ck-$((n += 1))
  shift 2
  mkdir -p "$ck"
  [ "$weights" = - ] || cp -r "$weights/pretrained_weight" "$ck/"
  chown -R "$test_user:" "$ck"
  out=$("$T" submit --json --set "stages.train.env.MASTER_PORT=$p" --set checkpoint.per_chain=false \
    --set "checkpoint.dir=$ck" "$@") || fail "submit $*: $out"
}
job_of() {  # job_of STAGE: its job id in $out (submit --json), or "none"
  json "([s['job_id'] for s in j['stages'] if s['stage'] == '$1'] + ['none'])[0]"
}
key_of() {  # key_of ARGS...: the compile key of the recipe with ARGS
  "$T" cache key --json "$@" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])'
}
cache=$work/neuron-cache/tiny
# Another TP: 4, on 4 workers per node (with 2 key/value heads, TP 1 is refused by qkv_linear).
tp4=(--set train.tp=4 --set cluster.cores_per_node=4)

# The converted weights for TP 2 and TP 4.
submit $((port + 1)) - --only convert
c2=$(job_of convert) w2=$(json "j['checkpoint_dir']")
submit $((port + 1)) - --only convert "${tp4[@]}"
w4=$(json "j['checkpoint_dir']")
wait_jobs "$c2" "$(job_of convert)"

# Compiles side by side: A (the recipe), D then E (TP 4, back to back), F then G (micro-batch 2,
# F's compilations failing: G waits for F, then compiles itself).
submit $((port + 1)) "$w2" --only precompile
a_chain=$(json "j['chain_id']") a_job=$(job_of precompile)
expect_contains "A compiles" "precompile compiles into the cache" "$(json "j['compile_cache']")"
submit $((port + 2)) "$w4" --only precompile "${tp4[@]}"
d_chain=$(json "j['chain_id']") d_job=$(job_of precompile)
submit $((port + 2)) "$w4" --only precompile "${tp4[@]}"
e_chain=$(json "j['chain_id']") e_job=$(job_of precompile)
expect_contains "E waits for D's compile of the same key" "(job $d_job), which compiles the same key" "$(json "j['compile_cache']")"
expect_contains "E's precompile waits for D's (afterany)" "--dependency=afterany:$d_job" "$(json "' '.join(j['stages'][0]['sbatch_argv'])")"
# A chain of D's key without a precompile: its train (held here) waits for the newest precompile
# of the key, E's (which ends after D's), instead of compiling beside it.
submit $((port + 2)) "$w4" --only train --sbatch-arg=--hold "${tp4[@]}"
expect_contains "a train-only chain says its train waits" "train waits for chain" "$(json "j['compile_cache']")"
expect_contains "its train waits for E's precompile (afterany)" "--dependency=afterany:$e_job" \
  "$(json "' '.join(j['stages'][0]['sbatch_argv'])")"
submit $((port + 3)) "$w2" --only precompile --set train.mbs=2 --set stages.precompile.env.TRNSLURM_STANDIN_COMPILE_FAIL=1
f_job=$(job_of precompile)
submit $((port + 3)) "$w2" --only precompile --set train.mbs=2
g_chain=$(json "j['chain_id']") g_job=$(job_of precompile)
expect_contains "G waits for F" "(job $f_job)" "$(json "j['compile_cache']")"
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$a_job,$d_job,$e_job,$f_job,$g_job" -t pending,running,configuring,completing -o %i)" ] && break
  sleep 0.5
done
states=$(squeue -h -t all -j "$a_job,$d_job,$e_job,$f_job,$g_job" -o '%i %T' | sort -n | cut -d' ' -f2 | tr '\n' ' ')
expect_eq "A, D, E, F, G ended (F failed)" "COMPLETED COMPLETED COMPLETED FAILED COMPLETED " "$states"

key_a=$(key_of)
key_tp4=$(key_of "${tp4[@]}")
key_mbs2=$(key_of --set train.mbs=2)
[ "$key_a" != "$key_tp4" ] || fail "another TP gave the same compile key $key_a"
expect_eq "A's marker names chain A" "$a_chain" "$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["chain"])' "$cache/$key_a/warm.json")"
expect_eq "the marker is the chain user's" "$test_user" "$(stat -c %U "$cache/$key_a/warm.json")"
[ -n "$(find "$cache/$key_a/neuron" -path '*/MODULE_*/model.done')" ] || fail "A compiled nothing into $cache/$key_a/neuron"
checks=$((checks + 1))
# D and E: one compile. E's job found D's key and ended at once; the stand-in's collect ran once.
logs=$(cat runs/*/logs/precompile-"$d_job".out runs/*/logs/precompile-"$e_job".out)
expect_eq "D and E compiled once" 1 "$(grep -c '^trnslurm: compiling key' <<<"$logs")"
expect_contains "E skipped: D's key was warm" "precompile skipped: the compile cache is warm for key $key_tp4" \
  "$(cat runs/"$e_chain"/logs/precompile-"$e_job".out)"
# F failed after compiling: no key. G, waiting for it, compiled itself and recorded it.
f_log=$(cat runs/*/logs/precompile-"$f_job".out)
expect_contains "F's compilations failed" "Total failed compilations:" "$f_log"
case $f_log in *"recorded:"*) fail "F failed, yet recorded its key: $f_log" ;; esac
expect_contains "G removed F's failures" "failed compilation(s) an earlier precompile of key $key_mbs2 left" "$(cat runs/*/logs/precompile-"$g_job".out)"
expect_contains "G recorded the key F failed to" "compile key $key_mbs2 recorded" "$(cat runs/*/logs/precompile-"$g_job".out)"
# status says what became of the waits: E skipped (D compiled the key), G compiled it itself.
expect_contains "status: E skipped, D compiled" "precompile skipped: chain $d_chain compiled the key" \
  "$("$T" status "$e_chain" 2>&1 || true)"
expect_contains "status: G compiled" "precompile compiled the key: cache warm since" "$("$T" status "$g_chain" 2>&1 || true)"
expect_eq "the marker is G's" "$g_job" "$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["job"])' "$cache/$key_mbs2/warm.json")"

# Same recipe, then another learning rate: precompile skipped, the train job alone (held here).
for lr in as-written 0.5; do
  extra=()
  [ "$lr" = as-written ] || extra=(--set "train.lr=$lr")
  submit $((port + 4)) - --from precompile --until train --sbatch-arg=--hold "${extra[@]}"
  expect_eq "lr '$lr': train only" "none" "$(job_of precompile)"
  expect_eq "lr '$lr': skipped" "precompile skipped: cache warm since" \
    "$(json "j['compile_cache'].split(': ', 1)[1][:36]")"
  chain=$(json "j['chain_id']")
  status=$("$T" status "$chain" 2>&1 || true)
  expect_contains "status says why" "precompile skipped: cache warm since" "$status"
  expect_contains "status names the chain that compiled" "chain $a_chain (compile key $key_a)" "$status"
done

# cache list and clear: the key a held chain uses is not cleared; once it is cancelled, it is.
listing=$("$T" cache list)
expect_contains "list: A's key is warm, used by a live chain" "(live)" "$(grep -A1 "^$key_a" <<<"$listing")"
set +e
"$T" cache clear --key "$key_a" >clear.out 2>&1
rc=$?
set -e
expect_eq "clear refuses a key in use (exit 1)" 1 "$rc"
expect_contains "clear says who uses it" "is in use by chain(s) " "$(cat clear.out)"
expect_contains "clear names the held chain" "$chain" "$(cat clear.out)"
[ -f "$cache/$key_a/warm.json" ] || fail "a refused clear removed the marker"
for d in runs/*/; do "$T" cancel "$(basename "$d")" >/dev/null 2>&1 || true; done
"$T" cache clear --key "$key_a" >clear.out
expect_contains "clear after the chains ended" "cleared compile key $key_a" "$(cat clear.out)"
[ ! -e "$cache/$key_a" ] || fail "clear left $cache/$key_a"
checks=$((checks + 1))
expect_nodes_idle "the compile-cache chains"
finish
