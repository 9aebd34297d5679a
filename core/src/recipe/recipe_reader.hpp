#pragma once
// Reads a recipe's values out of its parsed TOML table: checks every key against the schema,
// reads typed values in range, and remembers where each came from (file:line:column, or the
// --set that gave it).

#include <toml++/toml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipe_schema.hpp"
#include "trnslurm/recipe/recipe.hpp"
#include "trnslurm/util/error.hpp"

namespace trnslurm {

class RecipeReader {
 public:
  // `overridden`: "section.key" -> the option that set it, which errors name instead of a line.
  RecipeReader(toml::table& root, std::string file, std::map<std::string, std::string> overridden)
      : root_(root), file_(std::move(file)), overridden_(std::move(overridden)) {}

  SourcePos pos(const toml::node& node, const std::string& path) const;
  SourcePos pos(const toml::key& key, const std::string& path) const;

  // Unknown keys, wrong types, misplaced keys.
  Result<void> check_keys();

  const toml::node* find(std::string_view section, std::string_view key) const;
  const toml::table* find_table(std::string_view section) const;
  void remember(std::map<std::string, SourcePos>& positions, std::string_view section,
                std::string_view key) const;

  // Integer in [lo, hi]; nullopt when absent.
  Result<std::optional<std::uint64_t>> uint_value(std::string_view section, std::string_view key,
                                                  std::uint64_t lo, std::uint64_t hi) const;

  template <class T>
  Result<void> read_uint(T& out, std::string_view section, std::string_view key, std::uint64_t lo = 0,
                         std::uint64_t hi = std::numeric_limits<T>::max()) const {
    auto v = uint_value(section, key, lo, hi);
    if (!v) return std::unexpected(v.error());
    if (*v) out = static_cast<T>(**v);
    return {};
  }

  Result<void> read_number(double& out, std::string_view section, std::string_view key, double lo,
                           double hi) const;
  void read_string(std::string& out, std::string_view section, std::string_view key) const;
  void read_bool(bool& out, std::string_view section, std::string_view key) const;

  // An error naming the section (or the file when the section is missing) and `key = example`.
  Result<void> require(std::string_view section, std::string_view key, std::string_view example) const;

  const std::string& file() const { return file_; }

 private:
  Result<void> unknown_key(const toml::key& key, const std::string& name, const std::string& section,
                           const std::vector<std::string>& candidates) const;
  Result<void> check_section(const toml::table& table, const std::string& section,
                             const std::vector<KeySpec>& keys);
  Result<void> check_stages(const toml::key& key, toml::node& node);

  toml::table& root_;
  std::string file_;
  std::map<std::string, std::string> overridden_;  // path -> option that set it
};

}  // namespace trnslurm
