#include "colour.hpp"

#include <unistd.h>

#include <cstdlib>

namespace trnslurm::cli {

bool colour_enabled(std::FILE* stream) {
  if (const char* no = std::getenv("NO_COLOR"); no != nullptr && *no != '\0') return false;
  if (const char* term = std::getenv("TERM"); term != nullptr && std::string_view(term) == "dumb")
    return false;
  return ::isatty(::fileno(stream)) != 0;
}

std::string paint(std::string_view text, Colour colour, bool enabled) {
  if (!enabled || colour == Colour::none || text.empty()) return std::string(text);
  const char* code = colour == Colour::red ? "31" : colour == Colour::green ? "32" : "33";
  std::string out = "\x1b[";
  out += code;
  out += 'm';
  out += text;
  out += "\x1b[0m";
  return out;
}

Colour state_colour(std::string_view phase) {
  if (phase == "succeeded" || phase == "ok") return Colour::green;
  if (phase == "pending" || phase == "running" || phase == "held" || phase == "unknown" || phase == "warn")
    return Colour::yellow;
  if (phase == "failed" || phase == "cancelled" || phase == "FAIL") return Colour::red;
  return Colour::none;
}

}  // namespace trnslurm::cli
