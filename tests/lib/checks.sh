# The checks every shell test uses (tests/cli, tests/integration): each counts, `finish` refuses a
# test in which none ran. Source it after `set -euo pipefail`; it creates $work, the test's own
# directory under TRNSLURM_TEST_TMP.
# shellcheck disable=SC2034,SC2154  # work, rc, out: set here for the tests that source this file; $out also read
mkdir -p "${TRNSLURM_TEST_TMP:-/tmp}"
work=$(mktemp -d "${TRNSLURM_TEST_TMP:-/tmp}/$(basename "$0" .sh).XXXXXX")
checks=0

# json EXPR: EXPR, a Python expression over `j` (the JSON document in $out), printed: the one
# way the shell tests read JSON fields (Debian's python3, not the PATH's).
json() {
  printf '%s' "$out" | /usr/bin/python3 -c "import json, sys; j = json.load(sys.stdin); print($1)"
}

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

expect_match() {  # expect_match WHAT ERE HAYSTACK: some line of HAYSTACK matches the extended regex
  checks=$((checks + 1))
  grep -qE -- "$2" <<<"$3" || fail "$1: expected a line matching '$2', got: $3"
}

finish() {
  [ "$checks" -gt 0 ] || fail "no check ran"
  printf 'ok: %d checks\n' "$checks"
}
