#include <catch2/catch.hpp>

#include "trnslurm/upstream/installed_help.hpp"

using namespace trnslurm;
using namespace trnslurm::upstream;

namespace {
std::vector<ArgWord> words(std::initializer_list<const char*> texts) {
  std::vector<ArgWord> out;
  for (const auto* t : texts) out.push_back({t, SourcePos{"recipe.toml", 1, 1}});
  return out;
}
}  // namespace

TEST_CASE("installed help: the options a stage gives, each once, values left out") {
  const auto given = options_given(words({"--module", "m", "--training.steps=5", "--checkpoint.enable",
                                          "--training.steps", "6", "-1", "--", "--x.y_z"}));
  CHECK(given == std::vector<std::string>{"--module", "--training.steps", "--checkpoint.enable", "--x.y_z"});
}

TEST_CASE("installed help: an option the installed trainer does not list is refused") {
  // As tyro prints them: hyphens, a usage line, options in brackets and after commas.
  const std::string help =
      "usage: train.py [-h] --module STR --config STR [--training.local-batch-size INT]\n"
      "  --checkpoint.enable, --checkpoint.no-enable   (default: False)\n"
      "  --training.steps INT   (default: 10000)\n"
      "  --dump-folder STR\n";
  CHECK(options_not_in_help(help, {"--module", "--config", "--training.local_batch_size", "--training.steps",
                                   "--checkpoint.enable", "--checkpoint.no_enable", "--dump_folder"})
            .empty());
  // A flag upstream removed (optimizer.lr, June 2026), a part of a listed one, a longer one.
  CHECK(options_not_in_help(help, {"--optimizer.lr", "--training.step", "--training.steps_x"}) ==
        std::vector<std::string>{"--optimizer.lr", "--training.step", "--training.steps_x"});
  // The negative form of a listed switch counts as listed; of an unlisted one, not.
  CHECK(options_not_in_help("--metrics.enable-tensorboard", {"--metrics.no_enable_tensorboard"}).empty());
  CHECK(options_not_in_help("--metrics.enable-tensorboard", {"--metrics.no_enable_wandb"}).size() == 1);
  CHECK(options_not_in_help("", {"--module"}).size() == 1);
}

TEST_CASE("installed help: the trainer asked as upstream's launcher runs it") {
  CHECK(trainer_help_argv("torchtitan/train.py", "/fsx/tt", "/opt/venv") ==
        std::vector<std::string>{"/usr/bin/env", "PYTHONPATH=/fsx/tt", "/opt/venv/bin/python3", "-m",
                                 "torchtitan.train", "--help"});
  CHECK(trainer_help_argv("torchtitan/train.py", "/fsx/tt", "")[2] == "python3");
}
