// The srun/#SBATCH options. Registered in every context that parses them (an exported
// spank_options[] is invisible to sbatch). The callback runs at submission (remote == 0), where
// a bad value refuses the submission, and again in slurmstepd (remote == 1), possibly twice,
// with values that may come from the environment (SLURM_SPANK__SLURM_SPANK_OPTION_trnslurm_*):
// there it only records, and a bad value becomes an error raised in task_init.
#include <array>
#include <string>

#include "state.hpp"

namespace trnslurm::spank {

namespace {

int on_option(int val, const char* optarg, int remote);

// `val` is the option's index here, so one callback serves all.
std::array<spank_option, 8> options{{
    {const_cast<char*>("trn-env"), const_cast<char*>("on|off"),
     const_cast<char*>("trnslurm: set the Neuron/EFA environment of each task (default on)"), 1, 0,
     on_option},
    {const_cast<char*>("trn-cores"), const_cast<char*>("per-node|per-task|N"),
     const_cast<char*>("trnslurm: NeuronCores per task: all for one task per node (torchrun), split "
                       "between the node's tasks, or N each (default: per-node with one task per node, "
                       "else per-task)"),
     1, 1, on_option},
    {const_cast<char*>("trn-efa"), const_cast<char*>("auto|on|off"),
     const_cast<char*>("trnslurm: set FI_* for EFA when an efa provider exists (auto), always, or never"), 1,
     2, on_option},
    {const_cast<char*>("trn-cache"), const_cast<char*>("DIR"),
     const_cast<char*>("trnslurm: Neuron compile cache (absolute directory or s3:// URL)"), 1, 3, on_option},
    {const_cast<char*>("trn-root-comm"), const_cast<char*>("PORT"),
     const_cast<char*>(
         "trnslurm: also set NEURON_RT_ROOT_COMM_ID=<master address>:PORT (PORT optional, default 46820)"),
     2, 4, on_option},
    {const_cast<char*>("trn-verbose"), nullptr,
     const_cast<char*>("trnslurm: print each task's variables and why to its stderr"), 0, 5, on_option},
    {const_cast<char*>("trn-preflight"), nullptr,
     const_cast<char*>("trnslurm: a pre-flight step: at its end the plugin re-checks the node as root and "
                       "drains it if broken, where plugstack.conf allows (preflight_drain=yes)"),
     0, 6, on_option},
    {const_cast<char*>("trn-launch"), const_cast<char*>("torchrun|auto"),
     const_cast<char*>(
         "trnslurm: torchrun: the node's one task runs torchrun with TorchNeuron workers (per-node "
         "settings only, no NEURON_RT_VISIBLE_CORES); auto: decided from the tasks per node"),
     1, 7, on_option},
}};

int on_option(int val, const char* optarg, int remote) {
  return guarded("option", remote ? 0 : -1, [&] {
    if (val < 0 || static_cast<std::size_t>(val) >= options.size()) return remote ? 0 : -1;
    const spank_option& opt = options[static_cast<std::size_t>(val)];
    std::optional<std::string_view> value;
    if (optarg) value = optarg;
    auto& st = state();
    auto ok = apply_option(st.options, opt.name, value, st.site.defaults.root_comm_default_port);
    if (ok) return 0;
    const auto msg = to_string(ok.error());
    if (!remote) {
      log_error(msg);
      return -1;  // srun/sbatch refuse the submission (exit 255)
    }
    st.remote_error = msg;
    return 0;
  });
}

}  // namespace

int register_options(spank_t sp, spank_context_t ctx) {
  for (auto& opt : options) {
    if (spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
      log_error(std::string("could not register --") + opt.name);
      // Refusing to load in srun/sbatch is safe; in slurmstepd it would drain the node.
      if (ctx == S_CTX_REMOTE) {
        state().remote_error = std::string("could not register --") + opt.name;
        return 0;
      }
      return -1;
    }
  }
  return 0;
}

}  // namespace trnslurm::spank
