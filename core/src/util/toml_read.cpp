#include "toml_read.hpp"

#include "trnslurm/util/source_pos.hpp"

namespace trnslurm {

Result<toml::table> parse_toml(std::string_view text, const std::string& file) {
  try {
    return toml::parse(text, std::string_view(file));
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return fail(std::string(e.description()), to_string(SourcePos{file, begin.line, begin.column}),
                "fix the TOML syntax (https://toml.io)");
  }
}

std::string toml_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

}  // namespace trnslurm
