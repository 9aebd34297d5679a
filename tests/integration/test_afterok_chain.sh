# The scheduler settings the product relies on: a four-job afterok chain runs in order, and a
# failed parent cancels its dependents instead of leaving them pending forever.
source "$(dirname "$0")/lib.sh"

log=$work/order
prev=""
ids=()
for stage in convert precompile train convert-back; do
  dep=()
  [ -z "$prev" ] || dep=(--dependency="afterok:$prev")
  prev=$(sbatch --parsable "${dep[@]}" -o /dev/null --wrap "echo $stage >> '$log'")
  ids+=("$prev")
done
wait_jobs "${ids[@]}"
expect_eq "chain order" "convert precompile train convert-back" "$(tr '\n' ' ' <"$log" | sed 's/ $//')"

first=$(sbatch --parsable -o /dev/null --wrap 'exit 3')
second=$(sbatch --parsable -o /dev/null --dependency="afterok:$first" --wrap true)
wait_jobs "$first" "$second"
expect_eq "state of a dependent of a failed job" "CANCELLED" \
  "$(squeue -h -t all -j "$second" -o %T)"
finish
