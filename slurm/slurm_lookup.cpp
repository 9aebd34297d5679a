#include "slurm_lookup.hpp"

extern "C" {
#include <slurm/slurm.h>
}

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <type_traits>

namespace trnslurm::slurm_lookup {

namespace {
struct Destroy {
  void operator()(hostlist_t hl) const noexcept { slurm_hostlist_destroy(hl); }
};
using Hostlist = std::unique_ptr<std::remove_pointer_t<hostlist_t>, Destroy>;
}  // namespace

std::optional<std::string> first_host(const std::string& nodelist) {
  Hostlist hl(slurm_hostlist_create(nodelist.c_str()));
  if (!hl) return std::nullopt;
  std::unique_ptr<char, decltype(&std::free)> host(slurm_hostlist_shift(hl.get()), &std::free);
  if (!host) return std::nullopt;
  return std::string(host.get());
}

std::optional<std::vector<std::string>> hosts(const std::string& nodelist) {
  Hostlist hl(slurm_hostlist_create(nodelist.c_str()));
  if (!hl) return std::nullopt;
  std::vector<std::string> out;
  while (true) {
    std::unique_ptr<char, decltype(&std::free)> host(slurm_hostlist_shift(hl.get()), &std::free);
    if (!host) break;
    out.emplace_back(host.get());
  }
  return out;
}

std::optional<std::string> node_addr(const std::string& node) {
  using get_fn = char* (*)(const char*);
  using free_fn = void (*)(void*);
  const auto get = reinterpret_cast<get_fn>(dlsym(RTLD_DEFAULT, "slurm_conf_get_address"));
  const auto release = reinterpret_cast<free_fn>(dlsym(RTLD_DEFAULT, "slurm_xfree_ptr"));
  if (!get || !release) return std::nullopt;
  char* addr = get(node.c_str());
  if (!addr) return std::nullopt;
  std::string out(addr);
  release(addr);
  return out;
}

}  // namespace trnslurm::slurm_lookup
