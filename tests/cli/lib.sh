# Shared by the CLI tests: they run the built `trnslurm` without Slurm, each in a directory of
# its own. Source it; it sets `set -euo pipefail`.
set -euo pipefail
: "${TRNSLURM_BIN:?run through ctest}"
mkdir -p "${TRNSLURM_TEST_TMP:-/tmp}"
work=$(mktemp -d "${TRNSLURM_TEST_TMP:-/tmp}/$(basename "$0" .sh).XXXXXX")
checks=0

fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}

expect_eq() {  # expect_eq WHAT EXPECTED ACTUAL
  checks=$((checks + 1))
  [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

expect_contains() {  # expect_contains WHAT NEEDLE HAYSTACK
  checks=$((checks + 1))
  case $3 in *"$2"*) ;; *) fail "$1: expected to contain '$2', got: $3" ;; esac
}

# run ARGS...: runs trnslurm, keeping its exit code in $rc, stdout in $out, stderr in $err.
run() {
  rc=0
  "$TRNSLURM_BIN" "$@" >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(cat "$work/.out")
  err=$(cat "$work/.err")
}

# json_value KEY: the value of a top-level number or string key in $out (pretty-printed JSON).
json_value() {
  printf '%s\n' "$out" | sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p"
}

finish() {
  [ "$checks" -gt 0 ] || fail "no check ran"
  printf 'ok: %d checks\n' "$checks"
}
