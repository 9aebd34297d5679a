#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trnslurm/upstream/interface.hpp"
#include "trnslurm/util/error.hpp"
#include "trnslurm/util/source_pos.hpp"

namespace trnslurm::upstream {

// The words of an argument list, split the way a shell splits them: blanks and newlines
// separate, '...' and "..." quote, a backslash quotes the next character, backslash-newline
// continues the line, `#` at the start of a word comments to the end of the line. `start` is
// where `text` begins in its file (line and column count from 1; columns count characters).
// Refuses, at the character's position, what cannot be checked before it runs: `$` and
// backquotes (outside single quotes), `;`, `|`, `&`, `<`, `>`, `(`, `)` outside quotes, and an
// unterminated quote or placeholder.
Result<std::vector<ArgWord>> split_args(std::string_view text, const SourcePos& start);

// Does the word hold a {{placeholder}} (not an escaped \{{)? Its value is known only when the
// recipe is rendered, so check_args leaves it to the caller (check_value).
bool has_placeholder(std::string_view word);

enum class ArgIssue {
  unknown_flag,           // not a flag of the script (strict: refused; known: silently ignored)
  ambiguous_flag,         // a prefix of several flags: refused
  abbreviation,           // a unique prefix of a flag: argparse takes it, trnslurm wants the full name
  switch_with_value,      // a switch followed by a value word, or --switch=value
  missing_value,          // a flag that takes a value followed by a flag or by nothing
  repeated_flag,          // given twice (not append/count): the last one wins
  unexpected_positional,  // a word no flag takes and the script has no positional for
  missing_required,       // a required flag is not given
  bad_type,               // a literal that is not the flag's int/float
  bad_choice,             // a literal not among the flag's choices
  bool_false_is_true,     // a type=bool flag given a word meaning false: upstream reads true
};

struct ArgProblem {
  ArgIssue issue;
  SourcePos pos;
  std::string what;
  std::string hint;
};
Error to_error(const ArgProblem& problem);

struct CheckOptions {
  std::string script;   // how messages name the script; empty: the recorded path's file name
  SourcePos where;      // for problems of the list as a whole (a required flag missing)
  bool require = true;  // report missing required flags (false when the words are only part of the call)
};

// What the script's own argument parsing (argparse, as recorded) would refuse or silently get
// wrong in these words, in order. Literal values are checked with check_value; a word holding a
// placeholder is not (see given_flags).
std::vector<ArgProblem> check_args(const ScriptInterface& script, std::span<const ArgWord> words,
                                   const CheckOptions& options = {});

// The flags the words give, each with the option word and the value words argparse pairs with
// it (an abbreviation counts as the flag it abbreviates), for checking rendered values later.
struct GivenFlag {
  const Flag* flag = nullptr;
  ArgWord option;               // for --name=value, the --name part
  std::vector<ArgWord> values;  // for --name=value, the value part at its own column
};
std::vector<GivenFlag> given_flags(const ScriptInterface& script, std::span<const ArgWord> words);

// Is `value` read by upstream as intended for `flag`: an int/float that parses as one, one of
// its choices, and for type=bool not a word meaning false (upstream's bool() of any non-empty
// word is true). The problem has no position: the caller knows where the value came from.
std::optional<ArgProblem> check_value(const Flag& flag, std::string_view value);

}  // namespace trnslurm::upstream
