/* The floor for bench/plugin_overhead: a SPANK plugin that registers one option and sets one
 * variable per task, nothing else. What it costs is what Slurm charges for any plugin. */
#include <slurm/spank.h>

SPANK_PLUGIN(minimal, 1);

static int on_opt(int val, const char* optarg, int remote) {
  (void)val, (void)optarg, (void)remote;
  return 0;
}

static struct spank_option opt = {"minimal-x", "x", "minimal", 1, 0, on_opt};

int slurm_spank_init(spank_t sp, int ac, char** av) {
  (void)ac, (void)av;
  spank_context_t ctx = spank_context();
  if (ctx == S_CTX_LOCAL || ctx == S_CTX_REMOTE || ctx == S_CTX_ALLOCATOR) spank_option_register(sp, &opt);
  return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char** av) {
  (void)ac, (void)av;
  spank_setenv(sp, "MINIMAL_PLUGIN", "1", 0);
  return 0;
}
