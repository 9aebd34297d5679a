#pragma once
// What every reader of a TOML file in the core shares: the parse, with a syntax error turned
// into file:line:column, and the name of a value's kind for "must be X, got Y" messages.
#include <toml++/toml.h>

#include <string>
#include <string_view>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// The parse, after check_toml_nesting: every TOML the project reads comes through here.
Result<toml::table> parse_toml(std::string_view text, const std::string& file);

// How deep a TOML text may nest: the components of a dotted key (a table header's among them),
// arrays and inline tables, counted together along any path from the root. toml++ caps arrays
// and inline tables (256) but recurses once per dotted-key component, so a header of 250,000
// components overflows the stack; recipes, instance files and plugstack-named files nest a few
// levels. Checked on the text, before toml++ reads it, as file:line:column.
inline constexpr std::size_t max_toml_depth = 64;
Result<void> check_toml_nesting(std::string_view text, const std::string& file);

// "a string", "an integer", "a table", ...
std::string toml_type_name(const toml::node& node);

}  // namespace trnslurm
