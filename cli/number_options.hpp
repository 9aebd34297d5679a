#pragma once
// The check every fractional option of the CLI uses: CLI::Range compares, and NaN compares false
// with everything, so `--interval nan` passed it (issue 31). A value must be finite and in range.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

#include "trnslurm/util/parse_number.hpp"

namespace trnslurm::cli {

inline CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const auto v = parse_number<double>(text);
        if (!v || !std::isfinite(*v) || *v < lo || *v > hi)
          return fmt::format("'{}' is not a number from {:g} to {:g}", text, lo, hi);
        return {};
      },
      fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

}  // namespace trnslurm::cli
