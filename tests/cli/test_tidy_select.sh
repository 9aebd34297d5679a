# scripts/tidy lints only what changed since clang-tidy last passed it (tools/tidy/select.py):
# on a small tree of its own with a build's compile commands and dependency files, and a stand-in
# clang-tidy that logs what it is given and finds a problem in any file that says FINDING.
set -euo pipefail
source "$(dirname "$0")/../lib/checks.sh"
src=$TRNSLURM_SOURCE_DIR

make_tree() {  # make_tree DIR: a repository with core/a.cpp (includes h1 and a generated header) and core/b.cpp (h2)
  local r=$1
  mkdir -p "$r/core/inc" "$r/scripts" "$r/tools/tidy" "$r/build/core" "$r/build/gen"
  cp "$src/scripts/tidy" "$r/scripts/tidy"
  cp "$src/tools/tidy/select.py" "$r/tools/tidy/select.py"
  echo 'Checks: bugprone-*' >"$r/.clang-tidy"
  echo '#include "h1.hpp"' >"$r/core/a.cpp"
  echo '#include "h2.hpp"' >"$r/core/b.cpp"
  echo 'int h1;' >"$r/core/inc/h1.hpp"
  echo 'int h2;' >"$r/core/inc/h2.hpp"
  echo 'int generated;' >"$r/build/gen/g.hpp"
  cat >"$r/build/compile_commands.json" <<EOF
[
{"directory": "$r/build", "command": "/usr/bin/c++ -I$r/core/inc -std=c++23 -o core/a.o -c $r/core/a.cpp", "file": "$r/core/a.cpp"},
{"directory": "$r/build", "command": "/usr/bin/c++ -I$r/core/inc -std=c++23 -o core/b.o -c $r/core/b.cpp", "file": "$r/core/b.cpp"}
]
EOF
  printf 'core/a.o: %s /usr/include/stdio.h \\\n %s \\\n %s\n' "$r/core/a.cpp" "$r/core/inc/h1.hpp" "$r/build/gen/g.hpp" \
    >"$r/build/core/a.o.d"
  printf 'core/b.o: %s %s\n' "$r/core/b.cpp" "$r/core/inc/h2.hpp" >"$r/build/core/b.o.d"
  git -C "$r" init -q
  git -C "$r" add .clang-tidy core scripts tools
}

cat >"$work/clang-tidy" <<'EOF'
#!/bin/sh
if [ "$1" = --version ]; then echo "stand-in clang-tidy ${FAKE_TIDY_VERSION:-1}"; exit 0; fi
for last; do :; done
echo "$last" >>"$FAKE_TIDY_LOG"
if [ -n "${FAKE_TIDY_EDIT:-}" ]; then echo '// edited while linted' >>"$FAKE_TIDY_EDIT"; fi
if grep -q FINDING "$last"; then echo "$last:1:1: error: a finding" >&2; exit 1; fi
EOF
chmod +x "$work/clang-tidy"
export TRNSLURM_CLANG_TIDY=$work/clang-tidy FAKE_TIDY_LOG=$work/linted

repo=$work/repo
make_tree "$repo"
# tidy [ARGS...]: runs scripts/tidy on the tree; $rc, $linted (sorted, space-separated), $err.
tidy() {
  : >"$FAKE_TIDY_LOG"
  rc=0
  err=$("$repo/scripts/tidy" "$repo/build" "$@" 2>&1 >/dev/null) || rc=$?
  linted=$(sort "$FAKE_TIDY_LOG" | tr '\n' ' ' | sed 's/ $//')
}

tidy
expect_eq "no record: every file" "core/a.cpp core/b.cpp" "$linted"
expect_contains "says how many and against what" "2 of 2 files" "$err"
tidy --record
expect_eq "--record lints what changed" "core/a.cpp core/b.cpp" "$linted"
expect_eq "the record holds both" 2 "$(grep -c '^core/' "$repo/tools/tidy/clean.txt")"
tidy
expect_eq "nothing changed: nothing linted" "" "$linted"
expect_eq "nothing changed: exit 0" 0 "$rc"
expect_eq "a run without findings leaves the record as it is in the build" "" \
  "$(diff "$repo/tools/tidy/clean.txt" "$repo/build/tidy-clean.txt")"
tidy --all
expect_eq "--all: every file" "core/a.cpp core/b.cpp" "$linted"

echo 'int h1b;' >>"$repo/core/inc/h1.hpp"
tidy
expect_eq "a header changed: the files that include it" "core/a.cpp" "$linted"
tidy --record
tidy
expect_eq "recorded: nothing again" "" "$linted"

echo 'int generated2;' >>"$repo/build/gen/g.hpp"
tidy
expect_eq "a generated header changed" "core/a.cpp" "$linted"
tidy --record

sed -i 's/-o core\/b.o/-O2 -o core\/b.o/' "$repo/build/compile_commands.json"
tidy
expect_eq "a compile command changed" "core/b.cpp" "$linted"
tidy --record

sed -i 's/stdio.h/stdlib.h/' "$repo/build/core/a.o.d"
tidy
expect_eq "the system's headers are not the record's" "" "$linted"

echo '# more' >>"$repo/.clang-tidy"
tidy
expect_eq ".clang-tidy changed: every file" "core/a.cpp core/b.cpp" "$linted"
tidy --record
FAKE_TIDY_VERSION=2 tidy
expect_eq "another clang-tidy: every file" "core/a.cpp core/b.cpp" "$linted"

# The same tree somewhere else (another clone, scripts/test's copy) is the same tree.
moved=$work/moved
cp -a "$repo" "$moved"
sed -i "s|$repo|$moved|g" "$moved/build/compile_commands.json" "$moved"/build/core/*.o.d
: >"$FAKE_TIDY_LOG"
"$moved/scripts/tidy" "$moved/build" 2>/dev/null
expect_eq "a moved tree: nothing linted" "" "$(cat "$FAKE_TIDY_LOG")"

mv "$repo/build/core/b.o.d" "$work/b.o.d"
tidy
expect_eq "not built: linted" "core/b.cpp" "$linted"
expect_contains "says it was not built" "1 not built" "$err"
mv "$work/b.o.d" "$repo/build/core/b.o.d"

# A file edited while clang-tidy runs is not recorded as passed.
echo 'int h2b;' >>"$repo/core/inc/h2.hpp"
FAKE_TIDY_EDIT=$repo/core/inc/h2.hpp tidy
expect_eq "edited while linted: linted once" "core/b.cpp" "$linted"
expect_contains "edited while linted: said" "core/b.cpp changed while clang-tidy ran" "$err"
expect_eq "edited while linted: left out of the build's record" 1 "$(grep -c '^core/' "$repo/build/tidy-clean.txt")"
tidy
expect_eq "edited while linted: linted again" "core/b.cpp" "$linted"
expect_eq "then recorded" 2 "$(grep -c '^core/' "$repo/build/tidy-clean.txt")"

# A finding: non-zero, and the record is left as it was.
echo '// FINDING' >>"$repo/core/b.cpp"
echo 'int h1c;' >>"$repo/core/inc/h1.hpp"
cp "$repo/tools/tidy/clean.txt" "$work/record-before"
tidy --record
[ "$rc" -ne 0 ] || fail "a finding: expected a non-zero exit"
checks=$((checks + 1))
expect_eq "a finding: both changed files linted" "core/a.cpp core/b.cpp" "$linted"
expect_eq "a finding: the record unchanged" "" "$(diff "$work/record-before" "$repo/tools/tidy/clean.txt")"
cp "$repo/build/tidy-clean.txt" "$work/build-record-before"
tidy
[ "$rc" -ne 0 ] || fail "a finding: expected a non-zero exit without --record too"
checks=$((checks + 1))
expect_eq "a finding: the build's record unchanged" "" "$(diff "$work/build-record-before" "$repo/build/tidy-clean.txt")"
tidy core/a.cpp
expect_eq "FILE...: only those" "core/a.cpp" "$linted"
finish
