#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// Whether libfabric offers an `efa` provider on this node.
enum class EfaState { unknown, present, absent };

struct EfaProbe {
  EfaState state = EfaState::unknown;
  std::string detail;  // why: "fi_getinfo(efa): -61 (No data available)", "no probe result", ...
};

// dlopen()s libfabric.so.1, asks fi_getinfo for the efa provider, and unloads it again. Costs
// about 0.3 s (measured on the development machine): call it once per node (slurmd start), never per step or
// task.
EfaProbe probe_efa();

// The slurmd's probe, kept out of slurmd: `probe` runs in a forked child, which writes <dir>/efa
// itself and exits. libfabric never loads into slurmd (some EFA provider releases register a
// fork handler in fi_getinfo that aborts the next fork without copy-on-fork support, and slurmd
// forks for every step). A child that has not finished after `limit` is killed; one that dies
// (such an abort) or is killed leaves the answer "unknown", with why, written here instead.
// Returns the answer now in <dir>/efa, or why none could be saved. The child only probes,
// writes and _exit()s: no logging, no exit handlers of the parent.
Result<EfaProbe> probe_efa_in_child(const std::filesystem::path& dir, std::chrono::milliseconds limit,
                                    const std::function<EfaProbe()>& probe = probe_efa);

// The probe result kept in a file of its own: "state=present|absent|unknown\ndetail=...\n".
std::string format_efa_state(const EfaProbe& probe);
EfaProbe parse_efa_state(std::string_view text);

// Writes <dir>/efa atomically (temporary file, then rename), creating `dir` (one level, mode
// 0755) when missing. Meant for root in the slurmd context.
Result<void> write_efa_state(const std::filesystem::path& dir, const EfaProbe& probe);

// Reads <dir>/efa, trusting it only when the file and its directory are owned by root and
// writable by nobody else (a user must not be able to switch EFA on for others).
Result<EfaProbe> read_efa_state(const std::filesystem::path& dir);

std::string_view to_string(EfaState state);

}  // namespace trnslurm
