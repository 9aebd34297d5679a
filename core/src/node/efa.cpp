#include "trnslurm/node/efa.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <rdma/fabric.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>

#include "trnslurm/util/child.hpp"
#include "trnslurm/util/fd.hpp"

namespace trnslurm {

namespace {

namespace fs = std::filesystem;

struct DlClose {
  void operator()(void* handle) const noexcept { dlclose(handle); }
};

// Trust a path only when root owns it and neither group nor others may write to it.
Result<void> check_root_owned(const struct stat& st, const fs::path& path) {
  if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return fail("not owned by root or writable by others: not trusted", path.string(),
                "the slurmd context (root) writes it; check the plugstack state_dir");
  return {};
}

}  // namespace

std::string_view to_string(EfaState state) {
  switch (state) {
    case EfaState::present:
      return "present";
    case EfaState::absent:
      return "absent";
    case EfaState::unknown:
      break;
  }
  return "unknown";
}

EfaProbe probe_efa() {
  using getinfo_fn =
      int (*)(std::uint32_t, const char*, const char*, std::uint64_t, const fi_info*, fi_info**);
  using freeinfo_fn = void (*)(fi_info*);
  using dupinfo_fn = fi_info* (*)(const fi_info*);
  using strerror_fn = const char* (*)(int);

  // RTLD_NODELETE: the probe runs inside slurmd; a provider may leave a thread or an atexit
  // handler behind, so the library's code stays mapped after dlclose (memory, not a crash).
  std::unique_ptr<void, DlClose> lib(dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  if (!lib) return {EfaState::absent, fmt::format("libfabric.so.1 not loadable: {}", dlerror())};
  const auto getinfo = reinterpret_cast<getinfo_fn>(dlsym(lib.get(), "fi_getinfo"));
  const auto freeinfo = reinterpret_cast<freeinfo_fn>(dlsym(lib.get(), "fi_freeinfo"));
  const auto dupinfo = reinterpret_cast<dupinfo_fn>(dlsym(lib.get(), "fi_dupinfo"));
  const auto strerr = reinterpret_cast<strerror_fn>(dlsym(lib.get(), "fi_strerror"));
  if (!getinfo || !freeinfo || !dupinfo) return {EfaState::unknown, "libfabric.so.1 lacks fi_getinfo"};

  fi_info* hints = dupinfo(nullptr);
  if (!hints) return {EfaState::unknown, "fi_dupinfo failed"};
  std::array<char, 4> name{"efa"};
  hints->fabric_attr->prov_name = name.data();
  fi_info* info = nullptr;
  const int rc = getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info);
  hints->fabric_attr->prov_name = nullptr;  // ours, not libfabric's to free
  freeinfo(hints);
  if (rc == 0 && info) {
    freeinfo(info);
    return {EfaState::present, "fi_getinfo found the efa provider"};
  }
  if (info) freeinfo(info);
  return {EfaState::absent,
          fmt::format("fi_getinfo(prov_name=efa): {} ({})", rc, strerr ? strerr(-rc) : "no fi_strerror")};
}

Result<EfaProbe> probe_efa_in_child(const fs::path& dir, std::chrono::milliseconds limit,
                                    const std::function<EfaProbe()>& probe) {
  const auto save = [&](EfaProbe answer) -> Result<EfaProbe> {
    if (auto ok = write_efa_state(dir, answer); !ok) return std::unexpected(ok.error());
    return answer;
  };
  const pid_t pid = fork();
  if (pid < 0)
    return save({EfaState::unknown, fmt::format("cannot fork the probe: {}", std::strerror(errno))});
  if (pid == 0) {
    int code = 2;
    try {
      code = write_efa_state(dir, probe()) ? 0 : 1;
    } catch (...) {
    }
    _exit(code);
  }
  const auto waited = wait_bounded(pid, limit);
  if (waited && !*waited)
    return save(
        {EfaState::unknown, fmt::format("the probe did not finish within {} ms: killed", limit.count())});
  if (!waited) {
    // ECHILD: the caller reaps its children itself; the file tells what the child did.
    if (auto answer = read_efa_state(dir)) return answer;
    return save({EfaState::unknown, "the probe process left no answer"});
  }
  const int status = **waited;
  if (WIFSIGNALED(status))
    return save({EfaState::unknown, fmt::format("the probe process died of signal {} ({})", WTERMSIG(status),
                                                strsignal(WTERMSIG(status)))});
  if (WEXITSTATUS(status) != 0)
    return save({EfaState::unknown, fmt::format("the probe process failed (exit {})", WEXITSTATUS(status))});
  return read_efa_state(dir);
}

std::string format_efa_state(const EfaProbe& probe) {
  std::string detail = probe.detail;
  for (char& c : detail) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return fmt::format("state={}\ndetail={}\n", to_string(probe.state), detail);
}

EfaProbe parse_efa_state(std::string_view text) {
  EfaProbe probe{EfaState::unknown, "probe result unreadable"};
  bool have_state = false;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.starts_with("state=")) {
      const auto v = line.substr(6);
      if (v == "present")
        probe.state = EfaState::present;
      else if (v == "absent")
        probe.state = EfaState::absent;
      else
        probe.state = EfaState::unknown;
      have_state = true;
    } else if (line.starts_with("detail=")) {
      probe.detail = std::string(line.substr(7));
    }
  }
  if (!have_state) return {EfaState::unknown, "probe result has no state line"};
  return probe;
}

Result<void> write_efa_state(const fs::path& dir, const EfaProbe& probe) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return fail(fmt::format("cannot create the state directory: {}", std::strerror(errno)), dir.string());
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return fail("state directory is not a directory", dir.string());
  if (auto ok = check_root_owned(st, dir); !ok) return ok;

  const fs::path tmp = dir / fmt::format(".efa.{}", getpid());
  const std::string text = format_efa_state(probe);
  {
    Fd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd) return fail(fmt::format("cannot write: {}", std::strerror(errno)), tmp.string());
    if (write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      return fail("short write", tmp.string());
    fchmod(fd.get(), 0644);
  }
  if (rename(tmp.c_str(), (dir / "efa").c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return fail(fmt::format("cannot rename into place: {}", std::strerror(err)), (dir / "efa").string());
  }
  return {};
}

Result<EfaProbe> read_efa_state(const fs::path& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0)
    return fail("no EFA probe result (the slurmd has not probed)", dir.string());
  if (auto ok = check_root_owned(st, dir); !ok) return std::unexpected(ok.error());
  const fs::path file = dir / "efa";
  Fd fd(open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) return fail("no EFA probe result (the slurmd has not probed)", file.string());
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return fail("not a regular file", file.string());
  if (auto ok = check_root_owned(st, file); !ok) return std::unexpected(ok.error());
  std::array<char, 1024> buf{};
  const ssize_t n = read(fd.get(), buf.data(), buf.size());
  if (n < 0) return fail(fmt::format("cannot read: {}", std::strerror(errno)), file.string());
  return parse_efa_state(std::string_view(buf.data(), static_cast<std::size_t>(n)));
}

}  // namespace trnslurm
