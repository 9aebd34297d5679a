#pragma once

#include <cstdint>
#include <string>

namespace trnslurm {

// Where a value written in a file came from: file, line, column (1-based). A value given on the
// command line has line 0 and `file` saying how ("--set section.key=value").
struct SourcePos {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};
// One word of an argument list written in a recipe: its text as the program receives it
// (quotes removed; placeholders such as {{train.mbs}} kept as written) and where it starts.
struct ArgWord {
  std::string text;
  SourcePos pos;
};

// "file:line:column", or just `file` when there is no line.
std::string to_string(const SourcePos& pos);

}  // namespace trnslurm
