#pragma once
// What one pre-flight check says about a node (docs/health.md): ok, warn (unknown, or worth a
// look) or FAIL (training here would fail or waste its time).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trnslurm::health {

enum class Status { ok, warn, fail };

struct Finding {
  std::string check;  // the check's name (check_names in node_checks.hpp)
  Status status = Status::ok;
  std::string detail;  // for people: what was found, and for a warn or FAIL what to do
};

// "ok", "warn", "FAIL": the words doctor prints and the JSON carries.
std::string_view to_string(Status status);
// The inverse, for the per-node lines doctor --cluster reads back; nullopt for anything else.
std::optional<Status> parse_status(std::string_view text);

// The worst status among the findings (ok when there are none).
Status worst(const std::vector<Finding>& findings);

// Why a node fails, in one line: each FAIL's check and detail, "; " between them ("" when none).
std::string fail_reason(const std::vector<Finding>& findings);

}  // namespace trnslurm::health
