# Issue 31: hostile and unlucky input. Every file the CLI reads, replaced by a FIFO, a device or
# an oversized file, is refused at once with its path (exit 2); so are nesting a TOML parser
# cannot take, numbers that are not finite, empty selectors of destructive commands, outputs that
# are not regular files and values that are not UTF-8. Each run is under `timeout` and a memory
# limit: a hang or an unbounded read fails the test instead of blocking it. No Slurm needed.
source "$(dirname "$0")/lib.sh"
cd "$work"
export SLURM_CONF=$work/slurm.conf
printf 'PlugStackConfig=%s/plugstack.conf\n' "$work" >slurm.conf
: >plugstack.conf

# limited ARGS...: run, with 20 s and 1 GiB of address space at most (a FIFO read would wait
# forever, /dev/zero would be read until memory runs out).
limited() {
  rc=0
  timeout 20 bash -c 'ulimit -v 1048576; exec "$@"' _ "$TRNSLURM_BIN" "$@" >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(cat "$work/.out")
  err=$(cat "$work/.err")
  [ "$rc" -ne 124 ] || fail "trnslurm $* hung (killed after 20 s)"
}

# hostile KIND PATH SIZE: PATH becomes a FIFO, a link to /dev/zero, or a sparse file of SIZE.
hostile() {
  rm -rf "$2"
  case $1 in
    fifo) mkfifo "$2" ;;
    device) ln -s /dev/zero "$2" ;;
    big) truncate -s "$3" "$2" ;;
  esac
}

# refused WHAT PATH ARGS...: trnslurm ARGS is refused with exit 2, naming PATH and what it is.
refused() {
  local what=$1 path=$2 kind=$3
  shift 3
  limited "$@"
  expect_eq "$what ($kind): exit" 2 "$rc"
  expect_contains "$what ($kind): names the path" "$path" "$err"
  case $kind in
    fifo) expect_contains "$what: says it is a FIFO" "is a FIFO, not a regular file" "$err" ;;
    device) expect_contains "$what: says it is a device" "is a character device, not a regular file" "$err" ;;
    big) expect_contains "$what: says it is too large" "is larger than" "$err" ;;
  esac
}

run init tiny-cpu
expect_eq "init" 0 "$rc"
cp trnslurm.toml good.toml

# The recipe (-r), slurm.conf, plugstack.conf and the plugstack file given to env.
for kind in fifo device big; do
  hostile "$kind" bad.toml 2M
  refused "recipe" "$work/bad.toml" "$kind" plan -r "$work/bad.toml" --samples 4096
  hostile "$kind" other.conf 17M
  SLURM_CONF=$work/other.conf refused "slurm.conf" "$work/other.conf" "$kind" plan --samples 4096
  refused "env --plugstack" "$work/other.conf" "$kind" env --plugstack "$work/other.conf" --ignore-env
done
printf 'PlugStackConfig=%s/ps.conf\n' "$work" >slurm.conf
for kind in fifo device big; do
  hostile "$kind" ps.conf 17M
  refused "plugstack.conf" "$work/ps.conf" "$kind" plan --samples 4096
done
printf 'PlugStackConfig=%s/plugstack.conf\n' "$work" >slurm.conf

# The site's instances file that plugstack.conf names (the plugin reads it in slurmstepd).
mkdir -m 0755 site
printf 'required /usr/lib/slurm/trnslurm.so instances=%s/site/instances.toml\n' "$work" >plugstack.conf
for kind in fifo device big; do
  hostile "$kind" site/instances.toml 2M
  limited instances
  expect_eq "site instances file ($kind): exit" 2 "$rc"
  expect_contains "site instances file ($kind): names the path" "$work/site/instances.toml" "$err"
done
# ... and deep nesting in it: 250,000 dotted components once crashed toml++.
{
  printf '[instances.a'
  head -c 500000 /dev/zero | tr '\0' '.' | sed 's/\./.a/g'
  printf ']\n'
} >site/instances.toml
limited instances
expect_eq "site instances file, deep header: exit" 2 "$rc"
expect_contains "deep header: at its line and column" "$work/site/instances.toml:1:" "$err"
expect_contains "deep header: why" "nests more than 64 levels" "$err"
: >plugstack.conf

# A recipe of 250,000 dotted components, and one of arrays 100,000 deep: refused at the position.
cp good.toml deep.toml
{
  printf '[stages.train.env'
  head -c 250000 /dev/zero | tr '\0' 'x' | sed 's/x/.a/g'
  printf ']\n'
} >>deep.toml
limited plan -r deep.toml --samples 4096
expect_eq "deep recipe: exit" 2 "$rc"
expect_match "deep recipe: file:line:column" "deep\.toml:[0-9]+:[0-9]+: the TOML nests more than 64 levels" "$err"
limited plan --samples 4096 --set "slurm.sbatch_args=$(head -c 100000 /dev/zero | tr '\0' '[')"
expect_eq "deep --set: exit" 2 "$rc"
expect_contains "deep --set: names the option" "--set slurm.sbatch_args" "$err"

# Run directory files: the manifest, its journal and plan.json (list and status read them).
run submit --dry-run --samples 4096 --json
expect_eq "submit --dry-run" 0 "$rc"
chain=$(json 'j["chain_id"]')
cp -r "runs/$chain" saved
for file in manifest.json journal; do
  for kind in fifo device big; do
    hostile "$kind" "runs/$chain/$file" 17M
    refused "status: $file" "runs/$chain/$file" "$kind" status "$chain"
    limited list
    expect_contains "list: $file ($kind) named" "runs/$chain/$file" "$err"
  done
  rm -rf "runs/$chain" && cp -r saved "runs/$chain"
done

# Outputs replace only regular files: not a FIFO, not a device through a link.
mkfifo out.fifo
limited init tiny-cpu -o out.fifo -f
expect_eq "init -o FIFO -f: exit" 2 "$rc"
expect_contains "init -o FIFO -f: why" "is a FIFO, not a regular file: not replaced" "$err"
[ -p out.fifo ] || fail "init -o FIFO -f replaced the FIFO"
ln -s /dev/null out.dev
limited init tiny-cpu -o out.dev -f
expect_eq "init -o device -f: exit" 2 "$rc"
if [ ! -c /dev/null ] || [ ! -L out.dev ]; then fail "init -o device -f replaced the device or its link"; fi

# Destructive commands refuse empty selectors (an unset variable in a script).
limited cache clear --key '' --cache-dir "$work/cache"
expect_eq "cache clear --key '': exit" 2 "$rc"
expect_contains "cache clear --key '': why" "an empty key selects nothing" "$err"
for cmd in cancel status logs; do
  limited "$cmd" ''
  expect_eq "$cmd '': exit" 2 "$rc"
  expect_contains "$cmd '': why" "an empty chain id selects nothing" "$err"
done

# Numbers: finite and in range.
for v in nan NaN inf -inf -1 0 1e999 0x10; do
  limited watch --interval "$v"
  expect_eq "watch --interval $v: exit" 2 "$rc"
  limited watch --max-interval "$v"
  expect_eq "watch --max-interval $v: exit" 2 "$rc"
done
limited plan --suggest --efficiency nan --samples 4096
expect_eq "plan --efficiency nan: exit" 2 "$rc"

# Values that are not UTF-8 or hold control characters: refused by where they came from, before
# anything is written.
before=$(find runs -mindepth 1 -maxdepth 1 | wc -l)
limited submit --dry-run --samples 4096 --dataset "$(printf '/data/caf\xe9')"
expect_eq "--dataset not UTF-8: exit" 2 "$rc"
expect_contains "--dataset not UTF-8: where and why" "trnslurm: --dataset: the value holds a byte that is not UTF-8 (0xe9) at byte 9" "$err"
limited submit --dry-run --samples 4096 --set "model.name=$(printf 'a\033]0;title\007')"
expect_eq "--set with an escape: exit" 2 "$rc"
expect_contains "--set with an escape: where" "trnslurm: --set model.name: the value holds a control character (U+001B)" "$err"
expect_eq "nothing written for refused values" "$before" "$(find runs -mindepth 1 -maxdepth 1 | wc -l)"

# Messages are safe to print: a refused path's escape sequence is shown escaped.
limited plan -r "$(printf 'x\033[2Jy.toml')" --samples 4096
expect_eq "path with an escape: exit" 2 "$rc"
case $err in *$'\033'*) fail "an escape sequence reached the terminal: $err" ;; esac
expect_contains "path with an escape, escaped" 'x\x1b[2Jy.toml' "$err"

# Values that a second shell would read as code, in a recipe's stage command: what a pipeline
# prints into a shell or python, a here-string or a here-document a shell reads, declare -i and a
# variable declared so, a variable run as a command, a process substitution bash runs, and the
# inner shell's arithmetic or command string inside a single-quoted command string. Refused at
# the placeholder's file:line:column whatever the value (only a whole number is placed there),
# before anything is written; nothing runs. A here-document only cat reads takes the value; a quoted
# one would not expand it and is refused.
stage_command() { # stage_command FILE COMMAND: good.toml with stages.convert running COMMAND
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys
text = open("good.toml").read()
start = text.index("[stages.convert]")
end = text.index("[", text.index("\n", start))
command = '[stages.convert]\ntime = "00:05:00"\ncommand = """\nset -e\n' + sys.argv[2] + '\n"""\n\n'
open(sys.argv[1], "w").write(text[:start] + command + text[end:])
PY
}
dataset="$work/data/\$(touch $work/owned)"
before=$(find runs -mindepth 1 -maxdepth 1 | wc -l)
i=0
# shellcheck disable=SC2016  # the commands are a recipe's text
for command in 'echo {{dataset_path}} |
  bash' 'echo "ls {{dataset_path}}" | sudo -u nobody sh' 'bash <<< "ls {{dataset_path}}"' \
  'bash -s <<EOF
ls {{dataset_path}}
EOF' 'cat <<EOF | sh
ls {{dataset_path}}
EOF' 'declare -i n={{dataset_path}}' "bash -c 'echo \$(( {{dataset_path}} ))'" \
  'declare -i n; n={{dataset_path}}' 'cmd="ls {{dataset_path}}"; $cmd' 'echo {{dataset_path}} | python3' \
  'bash <(echo {{dataset_path}})' "srun bash -c 'bash -c \"ls {{dataset_path}}\"'"; do
  i=$((i + 1))
  stage_command "code$i.toml" "$command"
  line=$(grep -n '{{dataset_path}}' "code$i.toml" | head -1 | cut -d: -f1)
  limited submit --dry-run -r "code$i.toml" --samples 4096 --dataset "$dataset"
  expect_eq "value as code ($i): exit" 2 "$rc"
  expect_match "value as code ($i): at the placeholder's file:line" "code$i\.toml:$line:[0-9]+: '\{\{dataset_path\}\}' is in " "$err"
  expect_contains "value as code ($i): why" "is not a whole number" "$err"
done
stage_command quoted.toml "cat <<'EOF'
{{dataset_path}}
EOF"
limited submit --dry-run -r quoted.toml --samples 4096 --dataset "$work/data"
expect_eq "quoted here-document: exit" 2 "$rc"
expect_contains "quoted here-document: why" "a here-document whose delimiter is quoted" "$err"
expect_eq "values as code: nothing written" "$before" "$(find runs -mindepth 1 -maxdepth 1 | wc -l)"
[ ! -e "$work/owned" ] || fail "a value ran as code"
# shellcheck disable=SC2016  # the variable is the job script's
stage_command heredoc.toml 'cat >"$TRNSLURM_RUN_DIR/paths" <<EOF
{{dataset_path}}
EOF'
limited submit --dry-run -r heredoc.toml --samples 4096 --dataset "$dataset" --json
expect_eq "here-document read by cat: accepted" 0 "$rc"
script=runs/$(json 'j["chain_id"]')/convert.sh
# shellcheck disable=SC2016  # the text of the rendered script
expect_contains "here-document: the reference, unquoted, in the body" '
${TRNSLURM_DATASET_PATH}
EOF' "$(cat "$script")"
bash -n "$script" || fail "the rendered script does not parse"

# logs and logs -f on a stage's log that is a FIFO, a device, a file that keeps growing without a
# newline, a file that shrinks, and with stdout that cannot take it. A stand-in squeue says the
# train stage runs (tests/lib/fake_squeue.sh; on a real cluster: tests/integration).
source "$TRNSLURM_SOURCE_DIR/tests/lib/fake_squeue.sh"
fake_squeue "$work/fake"
printf 'job convert 101\njob precompile 102\njob train 103\njob convert_back 104\nstate submitted\n' \
  >>"runs/$chain/journal"
fake_state 101 COMPLETED
fake_state 102 COMPLETED
fake_state 103 RUNNING
fake_state 104 PENDING
mkdir -p "runs/$chain/logs"
log=$work/runs/$chain/logs/train-103.out
for kind in fifo device; do
  hostile "$kind" "$log"
  refused "logs" "$log" "$kind" logs "$chain" --stage train
  refused "logs -f" "$log" "$kind" logs "$chain" --stage train -f
done

# follow ARGS...: `trnslurm ARGS` in the background under the same limits, stdout to $follow_out
# (/dev/null unless set), stderr to $work/.err; its pid in $pid, and once its header is out.
follow() {
  timeout 20 bash -c 'ulimit -v 1048576; exec "$@"' _ "$TRNSLURM_BIN" "$@" >"${follow_out:-/dev/null}" \
    2>"$work/.err" &
  pid=$!
  for _ in $(seq 100); do grep -q '^==> ' "$work/.err" 2>/dev/null && break; sleep 0.1; done
}
# stopped SIGNAL WHAT: sends SIGNAL to the follow above; it ends with 0, not killed by timeout.
stopped() {
  sleep 0.5 # past the header: the handler is in place
  kill -"$1" "$pid"
  rc=0
  wait "$pid" || rc=$?
  expect_eq "$2: ends on SIG$1 with 0 (124: it hung until timeout killed it)" 0 "$rc"
}
# A log growing faster than it can be read (sparse: 256 MiB at a time, no disk), no newline in it.
# It stops at the stop file, so that no truncate is left running once it is waited for.
grow() { while [ ! -e "$work/stop-growing" ] && truncate -s +256M "$log"; do sleep 0.01; done; }
rm -f "$log"
printf 'begin' >"$log"
grow &
grower=$!
follow logs "$chain" --stage train -f
stopped TERM "logs -f on a log that grows without newlines"
follow logs "$chain" --stage train -f
stopped INT "logs -f on a log that grows without newlines"
touch "$work/stop-growing"
wait "$grower" || true
rm "$work/stop-growing"
# Without -f: what the log held when it was opened (1 GiB, sparse), not what it grows to after.
# The growth starts once trnslurm has the log open: started before, on a loaded machine the log
# was tens of GiB by the time a slowed trnslurm opened it, and reading those took over 20 s.
: >"$log"
truncate -s 1G "$log"
(
  rc=0
  timeout 20 bash -c 'ulimit -v 1048576; exec "$@" >/dev/null' _ "$TRNSLURM_BIN" logs "$chain" --stage train \
    2>"$work/.err" || rc=$?
  echo "$rc" >"$work/.rc"
) &
reader=$!
for _ in $(seq 200); do
  find /proc/[0-9]*/fd -lname "$log" 2>/dev/null | grep -q . && break
  [ ! -e "$work/.rc" ] || break
  sleep 0.05
done
grow &
grower=$!
wait "$reader"
expect_eq "logs on a log that grows: ends, exit 0 (124: hung)" 0 "$(cat "$work/.rc")"
touch "$work/stop-growing"
wait "$grower" || true

# A log that shrinks while it is followed is said and printed again from its start.
printf 'first line\n' >"$log"
follow_out=$work/.followed follow logs "$chain" --stage train -f
for _ in $(seq 100); do grep -q 'first line' "$work/.followed" && break; sleep 0.1; done
printf 'again\n' >"$log"
for _ in $(seq 100); do grep -q 'again' "$work/.followed" && break; sleep 0.1; done
stopped TERM "logs -f on a log that shrinks"
expect_contains "logs -f: the shrinking said" "$log: the log shrank from 11 to " "$(cat "$work/.err")"
expect_eq "logs -f: printed again from its start" "first line
again" "$(cat "$work/.followed")"

# watch on a live chain (the train stage runs) ends at once on SIGTERM and SIGINT, at the shortest
# interval and at the longest: exit 3, the chain still running (124: it hung until timeout).
for interval in 0.1 3600; do
  for sig in TERM INT; do
    timeout 20 "$TRNSLURM_BIN" watch "$chain" --interval "$interval" --max-interval "$interval" \
      >"$work/.watched" 2>"$work/.err" &
    pid=$!
    for _ in $(seq 100); do [ -s "$work/.watched" ] && break; sleep 0.1; done
    sleep 0.5 # a refresh printed: the handler is in place, and watch waits for the next
    kill -"$sig" "$pid"
    rc=0
    wait "$pid" || rc=$?
    expect_eq "watch --interval $interval on a live chain: ends on SIG$sig with 3" 3 "$rc"
  done
done

# stdout that cannot take the log: exit 1 with the reason, at once, -f included.
for f in "" -f; do
  rc=0
  # shellcheck disable=SC2086  # $f: no option, or -f
  timeout 20 "$TRNSLURM_BIN" logs "$chain" --stage train $f >/dev/full 2>"$work/.err" || rc=$?
  expect_eq "logs $f >/dev/full: exit" 1 "$rc"
  expect_contains "logs $f >/dev/full: why" "cannot write the log to stdout: No space left on device" \
    "$(cat "$work/.err")"
done

finish
