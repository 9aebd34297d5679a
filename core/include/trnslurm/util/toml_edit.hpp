#pragma once
// Changing values in a TOML file's text without rewriting it: comments, order, spacing and every
// other value stay as written.

#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/util/error.hpp"

namespace trnslurm {

// `key = value` in the [section] table; `value` is TOML as it is to be written ("16", "\"a\"").
struct TomlSet {
  std::string section;
  std::string key;
  std::string value;
};

// The text with each value replaced where it is written, or, when the key is absent, a
// `key = value` line added after the section's last value (a [section] table appended when there
// is none). Refused, with `file`:line:column: text that does not parse, a section written as an
// inline table or by dotted keys, or a key that is itself a table.
Result<std::string> set_toml_values(std::string_view text, const std::string& file,
                                    const std::vector<TomlSet>& sets);

}  // namespace trnslurm
