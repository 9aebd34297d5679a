#pragma once
// The installed trainer asked about itself (docs/upstream.md, "Checked against the installed
// trainer"): TorchTitan's command line moves faster than any record, so on a real cluster
// `doctor` and `submit` run the recipe's own `python -m torchtitan.train --help` (in its venv, on
// a compute node) and refuse a flag the installed trainer does not list.

#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/util/source_pos.hpp"

namespace trnslurm::upstream {

// The --options a stage's words give (values left out), in order, each once.
std::vector<std::string> options_given(const std::vector<ArgWord>& words);

// Those of `options` that `help` (the trainer's --help output) does not list. An option is listed
// when it appears as a whole word, `_` and `-` read alike (tyro prints either); the boolean
// `--S.no_F` form counts as listed when `--S.F` is.
std::vector<std::string> options_not_in_help(std::string_view help, const std::vector<std::string>& options);

// The command that asks the recipe's trainer: its venv's python3 (python3 on PATH without one)
// with the checkout `root` on PYTHONPATH, `-m <module of the train script> --help`
// ("torchtitan/train.py" -> torchtitan.train, as upstream's run_train.sh runs it).
std::vector<std::string> trainer_help_argv(std::string_view train_script, const std::string& root,
                                           const std::string& venv);

}  // namespace trnslurm::upstream
