#pragma once
// An enum's names as one table, read both ways: the one way an enum is spelled in files and on
// the command line (dataset formats, manifest states).

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace trnslurm {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
constexpr std::string_view name_of(const std::array<EnumName<E>, N>& names, E value) {
  const auto it = std::ranges::find(names, value, &EnumName<E>::value);
  return it == names.end() ? std::string_view("unknown") : it->name;
}

template <class E, std::size_t N>
constexpr std::optional<E> value_named(const std::array<EnumName<E>, N>& names, std::string_view name) {
  const auto it = std::ranges::find(names, name, &EnumName<E>::name);
  if (it == names.end()) return std::nullopt;
  return it->value;
}

}  // namespace trnslurm
