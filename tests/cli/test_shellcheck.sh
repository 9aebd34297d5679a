# Every shell file of scripts/, tests/ and bench/, and the job scripts' shell parts compiled into
# the core, goes through shellcheck: a warning or an error fails the suite. Settings in
# .shellcheckrc; fixtures that imitate upstream scripts are data, not ours to lint.
source "$(dirname "$0")/lib.sh"
cd "$TRNSLURM_SOURCE_DIR"

files=()
while IFS= read -r -d '' f; do
  case $f in
  *.sh | *.bash) files+=("$f") ;;
  *) if head -n 1 "$f" | grep -qE '^#!.*\b(ba)?sh\b'; then files+=("$f"); fi ;;
  esac
done < <(find scripts tests bench core/src/chain/scripts core/src/export/scripts -type f -not -path '*/fixtures/*' \
  -not -path '*/__pycache__/*' -print0 | sort -z)

# The suite's own scripts are here: a listing that found nothing would check nothing.
[ "${#files[@]}" -ge 30 ] || fail "found only ${#files[@]} shell files to check"
for expected in scripts/test scripts/dev-cluster tests/cli/lib.sh bench/chain core/src/chain/scripts/train_wrapper.sh core/src/export/scripts/batch_entry.sh; do
  expect_contains "shellcheck covers $expected" " $expected " " ${files[*]} "
done

if ! problems=$(shellcheck -x -S warning "${files[@]}" 2>&1); then
  fail "shellcheck found problems:
$problems"
fi
checks=$((checks + 1))
finish
