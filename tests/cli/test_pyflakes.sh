# Every Python file of the repository (the CPU stand-ins, the interface extractors, the report's
# plotter, the tests, anything added in any folder) goes through pyflakes: an unused import, an
# undefined name or a redefinition fails the suite. Fixtures that imitate upstream sources are data, not ours to lint.
source "$(dirname "$0")/lib.sh"
cd "$TRNSLURM_SOURCE_DIR"

# The *.py files, and the others whose first line names python (one process reads them all: a
# process or two per file took a minute on a loaded machine).
mapfile -t files < <(find . \( -path ./.git -o -path ./build -o -name __pycache__ -o -path '*/fixtures' \) -prune -o \
  -type f -printf '%P\0' | /usr/bin/python3 -c '
import re, sys
for name in sorted(filter(None, sys.stdin.read().split("\0"))):
    with open(name, "rb") as f:
        if name.endswith(".py") or re.match(rb"#!.*python", f.readline()):
            print(name)
')

# A listing that found nothing would check nothing.
[ "${#files[@]}" -ge 30 ] || fail "found only ${#files[@]} Python files to check"
for expected in scripts/cpu/nccom-test scripts/cpu/cpu_backend/standin.py tools/upstream-interface/extract.py \
  cli/scripts/plot_progress.py tests/docs/test_architecture.py; do
  expect_contains "pyflakes covers $expected" " $expected " " ${files[*]} "
done

command -v pyflakes3 >/dev/null || fail "pyflakes3 is not installed (scripts/install-deps installs it)"
if ! problems=$(pyflakes3 "${files[@]}" 2>&1); then
  fail "pyflakes found problems:
$problems"
fi
checks=$((checks + 1))
finish
