# Shared by the CLI tests: they run the built `trnslurm` without Slurm, each in a directory of
# its own. Source it; it sets `set -euo pipefail`.
# shellcheck disable=SC2034  # rc, out, err: set here for the tests that source this file
set -euo pipefail
: "${TRNSLURM_BIN:?run through ctest}"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"

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


# The names of the recipes in the source tree's recipes/, one per line, sorted: what
# `trnslurm recipes` must list (the binary bundles them at build time).
source_recipe_names() { find "$TRNSLURM_SOURCE_DIR/recipes" -maxdepth 1 -name '*.toml' -printf '%f\n' | sed 's/\.toml$//' | sort; }
