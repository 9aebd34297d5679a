#pragma once

#include <expected>
#include <string>

namespace trnslurm {

// Errors are values in the core: what went wrong, where (file:line:column, file and byte
// offset, option name...), and how to fix it. The front ends decide how to print them.
struct Error {
  std::string what;
  std::string where;
  std::string hint;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(std::string what, std::string where = {}, std::string hint = {}) {
  return std::unexpected<Error>(Error{std::move(what), std::move(where), std::move(hint)});
}

// "where: what (hint)" for front ends that print one line.
std::string to_string(const Error& e);

}  // namespace trnslurm
