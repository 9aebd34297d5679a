#pragma once
// What every reader of a TOML file in the core shares: the parse, with a syntax error turned
// into file:line:column, and the name of a value's kind for "must be X, got Y" messages.
#include <toml++/toml.h>

#include <string>
#include <string_view>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

Result<toml::table> parse_toml(std::string_view text, const std::string& file);

// "a string", "an integer", "a table", ...
std::string toml_type_name(const toml::node& node);

}  // namespace trnslurm
