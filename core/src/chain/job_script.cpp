#include "trnslurm/chain/job_script.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace trnslurm {
namespace {

Result<void> add_export(std::string& out, std::string_view name, std::string_view value,
                        std::string_view where) {
  if (!is_shell_name(name)) {
    return fail(fmt::format("'{}' is not a valid environment variable name", name), std::string(where),
                "use letters, digits and '_', not starting with a digit");
  }
  auto quoted = shell_quote(value);
  if (!quoted) {
    return fail(fmt::format("the value of {} cannot be put in a job script: {}", name, quoted.error().what),
                std::string(where), quoted.error().hint);
  }
  out += fmt::format("export {}={}\n", name, *quoted);
  return {};
}

void flatten_json(const nlohmann::json& j, const std::string& prefix, TemplateValues& out) {
  for (const auto& [key, value] : j.items()) {
    const auto name = prefix.empty() ? key : fmt::format("{}.{}", prefix, key);
    if (value.is_object()) {
      flatten_json(value, name, out);
    } else if (value.is_string()) {
      out[name] = value.get<std::string>();
    } else if (value.is_boolean() || value.is_number()) {
      out[name] = value.dump();
    }
  }
}

// The train stage's wrapper (docs/resilience.md). The recipe's command runs in a background
// subshell so the batch shell can take USR1 while it runs (bash runs traps only between
// commands). Everything it writes to logs/train-restarts.jsonl is numbers and fixed words.
constexpr std::string_view resilience_head = R"SH(
# --- trnslurm resilience (docs/resilience.md): checkpoint on USR1, requeue, resume ---
trn_log="$TRNSLURM_RUN_DIR/logs/train-restarts.jsonl"
trn_pending="$TRNSLURM_RUN_DIR/logs/.train-requeue"
trn_restart=${SLURM_RESTART_COUNT:-0}
trn_newest_step() {
  local d n best=-1
  for d in "${TRNSLURM_CHECKPOINT_DIR:-/nonexistent}"/step_*/done; do
    [ -e "$d" ] || continue
    n=${d%/done}
    n=${n##*/step_}
    [[ $n =~ ^[0-9]+$ ]] && [ "$((10#$n))" -gt "$best" ] && best=$((10#$n))
  done
  if [ "$best" -ge 0 ]; then echo "$best"; else echo null; fi
}
trn_record() {  # EVENT CAUSE [KEY VALUE]...: one JSON line
  local line
  line=$(printf '{"event":"%s","cause":"%s","restart":%d,"job":%d,"time":%d' "$1" "$2" \
    "$trn_restart" "${SLURM_JOB_ID:-0}" "$(date +%s)")
  shift 2
  while [ $# -ge 2 ]; do
    line+=$(printf ',"%s":%s' "$1" "$2")
    shift 2
  done
  printf '%s}\n' "$line" >>"$trn_log"
}
mkdir -p "$TRNSLURM_RUN_DIR/logs"
if [ "$trn_restart" -gt 0 ]; then
  # Our own requeue left its cause; otherwise Slurm requeued the job (a node failed, or
  # preemption, or `scontrol requeue` by hand).
  trn_cause=slurm-requeue
  if [ -f "$trn_pending" ] && read -r trn_c trn_n <"$trn_pending" && [ "$trn_n" = "$((trn_restart - 1))" ]; then
    trn_cause=$trn_c
  fi
  rm -f "$trn_pending"
  if [ "$trn_restart" -gt "$TRNSLURM_MAX_RESTARTS" ]; then
    trn_record gave-up "$trn_cause" max_restarts "$TRNSLURM_MAX_RESTARTS"
    echo "trnslurm: train restarted $trn_restart times, more than max_restarts = $TRNSLURM_MAX_RESTARTS: giving up" >&2
    exit 1
  fi
  trn_record restart "$trn_cause" resumed_from "$(trn_newest_step)"
  echo "trnslurm: restart $trn_restart ($trn_cause), resuming from step $(trn_newest_step)" >&2
fi
trn_time_left() {  # seconds to the time limit (squeue %L), or nothing when there is none
  local l d=0 f
  l=$(squeue -h -j "$SLURM_JOB_ID" -o %L 2>/dev/null) || return 0
  case $l in *-*) d=${l%%-*} l=${l#*-} ;; esac
  IFS=: read -r -a f <<<"$l"
  for l in "$d" "${f[@]}"; do [[ $l =~ ^[0-9]+$ ]] || return 0; done
  case ${#f[@]} in
  1) echo $((10#$d * 86400 + 10#${f[0]})) ;;
  2) echo $((10#$d * 86400 + 10#${f[0]} * 60 + 10#${f[1]})) ;;
  3) echo $((10#$d * 86400 + 10#${f[0]} * 3600 + 10#${f[1]} * 60 + 10#${f[2]})) ;;
  esac
}
trn_signalled=
# shellcheck disable=SC2317  # a trap handler: called indirectly
trn_on_usr1() {
  local left
  [ -z "$trn_signalled" ] || return 0
  # Slurm may send the --signal up to a minute early (its event resolution), and sends it again
  # as soon as a requeued job starts: ignore one that is far too early, or that comes in the
  # first seconds of a restart with more than signal_grace left (the timer below sends ours).
  left=$(trn_time_left)
  if [ -n "$left" ] && { [ "$left" -gt $((TRNSLURM_SIGNAL_GRACE + 60)) ] ||
    { [ "$trn_restart" -gt 0 ] && [ "$SECONDS" -lt 10 ] && [ "$left" -gt "$TRNSLURM_SIGNAL_GRACE" ]; }; }; then
    echo "trnslurm: USR1 with ${left}s left (signal_grace is ${TRNSLURM_SIGNAL_GRACE}s): ignored" >&2
    return 0
  fi
  trn_signalled=time-limit
  echo "trnslurm: USR1 (time limit near): asking the training to checkpoint" >&2
  # SIGTERM to every step's processes, not to this shell: torchrun forwards it to its workers
  # and gives them 30 s; the trainer stops at the next step and checkpoints.
  scancel --signal=TERM "$SLURM_JOB_ID" || true
}
# shellcheck disable=SC2317  # a trap handler: called indirectly
trn_on_term() {
  # Slurm's SIGTERM: preemption, a cancel, or the end of our own requeue (which wrote its cause).
  trn_signalled=${trn_signalled:-terminated}
  [ ! -f "$trn_pending" ] || return 0
  if sinfo -h -N -n "$SLURM_JOB_NODELIST" -o '%t' 2>/dev/null | grep -Eq '\*|down|fail'; then
    echo "node-failure $trn_restart" >"$trn_pending"
  else
    echo "preempted $trn_restart" >"$trn_pending"
  fi
}
trap trn_on_usr1 USR1
trap trn_on_term TERM
# Our own USR1 at signal_grace before the limit, in case Slurm's does not come (see above).
trn_left=$(trn_time_left)
if [ "$TRNSLURM_SIGNAL_GRACE" -gt 0 ] && [ -n "$trn_left" ] && [ "$trn_left" -gt "$TRNSLURM_SIGNAL_GRACE" ]; then
  (
    sleep $((trn_left - TRNSLURM_SIGNAL_GRACE))
    kill -USR1 $$
  ) &
  trn_timer=$!
fi
(
)SH";

constexpr std::string_view resilience_tail = R"SH() &
trn_pid=$!
while :; do
  trn_rc=0
  wait "$trn_pid" || trn_rc=$?
  # A trapped signal interrupts `wait` (status > 128) while the command still runs.
  kill -0 "$trn_pid" 2>/dev/null || break
done
[ -z "${trn_timer:-}" ] || kill "$trn_timer" 2>/dev/null || true
[ "$trn_rc" = 0 ] && exit 0
trn_requeue() {  # CAUSE: record it and requeue this job, unless max_restarts is used up
  local step
  step=$(trn_newest_step)
  if [ "$trn_restart" -ge "$TRNSLURM_MAX_RESTARTS" ]; then
    trn_record gave-up "$1" max_restarts "$TRNSLURM_MAX_RESTARTS" checkpoint "$step"
    echo "trnslurm: $1 after $trn_restart restarts (max_restarts = $TRNSLURM_MAX_RESTARTS): giving up" >&2
    exit 1
  fi
  echo "$1 $trn_restart" >"$trn_pending"
  trn_record requeue "$1" checkpoint "$step"
  echo "trnslurm: $1: requeueing job $SLURM_JOB_ID (checkpoint step $step)" >&2
  scontrol requeue "$SLURM_JOB_ID"
  sleep 300  # the requeue ends this script
  exit 1
}
if [ "$trn_signalled" = time-limit ]; then trn_requeue time-limit; fi
[ -n "$trn_signalled" ] && exit "$trn_rc"
# The command failed by itself. If a node of the job stopped responding, Slurm will requeue the
# job once it marks the node DOWN (that ends this script); wait for it, or requeue ourselves.
trn_timeout=$(scontrol show config | sed -n 's/^SlurmdTimeout *= *\([0-9]*\).*/\1/p')
trn_deadline=$((SECONDS + 3 * ${trn_timeout:-300} + 10))
while [ $SECONDS -lt $trn_deadline ]; do
  if sinfo -h -N -n "$SLURM_JOB_NODELIST" -o '%t' | grep -Eq '\*|down|fail|unk'; then
    echo "trnslurm: a node of the job stopped responding: waiting for Slurm to requeue" >&2
    echo "node-failure $trn_restart" >"$trn_pending"
    sleep "$((2 * ${trn_timeout:-300} + 10))"
    trn_requeue node-failure
  fi
  sleep 2
done
exit "$trn_rc"
)SH";

}  // namespace

std::vector<std::string> resilience_sbatch_args(const Resilience& r) {
  // Requeue explicitly (clusters may set JobRequeue=0); append so a restart keeps the log.
  std::vector<std::string> out{"--requeue", "--open-mode=append"};
  if (r.signal_grace > 0) out.push_back(fmt::format("--signal=B:USR1@{}", r.signal_grace));
  return out;
}

Result<std::string> render_job_script(const ScriptInput& in) {
  std::vector<std::string> used;
  auto body = render_template(in.command, in.values, in.command_origin, Substitution::variables, &used);
  if (!body) return std::unexpected(body.error());
  // The plan's figures, then every placeholder the command uses, each exported once.
  std::vector<std::pair<std::string, std::string>> exports{{"TRNSLURM_CHAIN_ID", in.chain_id},
                                                           {"TRNSLURM_STAGE", in.stage},
                                                           {"TRNSLURM_RUN_DIR", in.run_dir.string()}};
  exports.insert(exports.end(), in.exports.begin(), in.exports.end());
  for (const auto& name : used) {
    const auto var = variable_for(name);
    const auto& value = in.values.find(name)->second;
    const auto same =
        std::find_if(exports.begin(), exports.end(), [&](const auto& e) { return e.first == var; });
    if (same == exports.end()) {
      exports.emplace_back(var, value);
    } else if (same->second != value) {
      return fail(fmt::format("placeholders that differ only in '.' and '_' hold different values: {} stands "
                              "for both '{}' and '{}'",
                              var, same->second, value),
                  in.command_origin.file, "use one spelling of the name");
    }
  }
  std::string out = fmt::format(
      "#!/bin/bash\n"
      "# shellcheck disable=SC2016  # values are single-quoted on purpose: they must not expand\n"
      "# Stage '{}' of trnslurm chain {}: rendered by `trnslurm submit` from the recipe.\n"
      "# Edit the recipe and submit again rather than this file.\n"
      "set -eo pipefail\n",
      in.stage, in.chain_id);
  const std::string where = in.command_origin.file.empty() ? "job script" : in.command_origin.file;
  for (const auto& [name, value] : exports) {
    if (auto r = add_export(out, name, value, where); !r) return std::unexpected(r.error());
  }
  for (const auto& [name, value] : in.env) {
    const auto env_where = fmt::format("{}: {}.{}", where, in.env_where, name);
    auto rendered = render_template(value, in.values, TextOrigin{env_where, 1, 1}, Substitution::raw);
    if (!rendered) return std::unexpected(rendered.error());
    if (auto r = add_export(out, name, *rendered, env_where); !r) return std::unexpected(r.error());
  }
  if (in.resilience) {
    out += fmt::format("export TRNSLURM_MAX_RESTARTS={}\nexport TRNSLURM_SIGNAL_GRACE={}\n",
                       in.resilience->max_restarts, in.resilience->signal_grace);
    out += resilience_head;
  } else {
    out += "\n";
  }
  out += *body;
  if (!out.ends_with('\n')) out += '\n';
  if (in.resilience) out += resilience_tail;
  return out;
}

Result<TemplateValues> values_from_json(const nlohmann::json& object, const std::string& where) {
  if (!object.is_object()) return fail("expected a JSON object", where);
  TemplateValues out;
  flatten_json(object, "", out);
  return out;
}

std::vector<std::pair<std::string, std::string>> exports_for(const TemplateValues& values,
                                                             std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : values) {
    std::string name(prefix);
    for (char c : key) {
      name += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (is_shell_name(name)) out.emplace_back(std::move(name), value);
  }
  return out;
}

}  // namespace trnslurm
