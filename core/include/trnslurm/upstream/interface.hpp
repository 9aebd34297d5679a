#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnslurm/util/error.hpp"

namespace trnslurm::upstream {

// The command-line interface of upstream scripts as recorded in interfaces/<package>-<release>.json
// by tools/upstream-interface/extract.py (docs/upstream.md): facts read from the upstream sources
// of one release, compiled into the library (cmake/BundleInterfaces.cmake).

// parse_args refuses an unknown flag (exit 2); parse_known_args ignores it without a word.
enum class ParseMode { strict, known };

// argparse's type=: none (no type=, the value stays a string), int, float, str, bool (any
// non-empty word is true), other (a callable the record names in Flag::type_text; for a tyro
// field "other:T | None" is an optional T, which also takes the word None).
enum class ValueType { none, integer, floating, string, boolean, other };

struct Flag {
  std::vector<std::string> names;  // option strings as written ("--batch_size"), or the positional's name
  std::string dest;
  std::string action = "store";
  ValueType type = ValueType::none;
  std::string type_text;  // as recorded: "int", "other:<expr>", empty without type=
  bool required = false;
  nlohmann::json default_value;                   // null, a literal, or {"expr": "<source>"}
  std::optional<std::string> nargs;               // absent, "?", "*", "+" or a count ("2")
  std::vector<nlohmann::json> choices;            // empty: any value
  bool positional() const;                        // not an option: its name has no leading '-'
  bool takes_value() const;                       // store/append...: the option is followed by a value
  bool repeatable() const;                        // append, append_const, extend, count: may be given twice
  std::size_t min_values() const;                 // values it takes: 0 for a switch, nargs otherwise
  std::optional<std::size_t> max_values() const;  // nullopt: as many as follow ("*", "+")
};

struct ScriptInterface {
  std::string path;  // in the upstream repository, e.g. examples/training/llama/convert_checkpoints.py
  ParseMode parse = ParseMode::strict;
  // argparse takes a unique prefix of a flag for the flag; tyro's parser (TorchTitan) does not.
  bool allow_abbrev = true;
  std::string parser_file;                          // the file holding the add_argument calls
  std::vector<Flag> flags;                          // in source order
  const Flag* find(std::string_view option) const;  // exact option string, nullptr if none
  std::vector<std::string> option_names() const;    // every option string, for did-you-mean
};

// What an upstream launcher script passes to the script it runs (only the unconditional parts
// and the flags added under a condition, marked), for comparing a recipe with upstream's own.
struct LauncherArg {
  std::optional<std::string> flag;  // nullopt for a positional word
  std::vector<std::string> values;  // as written in the shell source; empty for a switch
  bool conditional = false;
};
struct Launcher {
  std::string path;
  std::string runs;  // the script (or launcher) it runs
  std::vector<LauncherArg> args;
  std::map<std::string, std::string, std::less<>> env;       // export NAME=VALUE, as written
  std::map<std::string, std::string, std::less<>> settings;  // NAME=VALUE and : ${NAME:=VALUE}
};

// A progress line a trainer prints (the record's log_formats): literal pieces and fields, in order.
struct LogPiece {
  std::string literal;               // the text, when not a field
  std::optional<std::string> field;  // the expression printed, as written upstream
  std::string spec;                  // its format spec (".4f"), empty without one
};
// How the trainer calls a logging method: the argument for each parameter, the tests around the
// call (outermost first), and for each counter among the arguments whether it moves "before" or
// "after" the call (whether the value logged counts the step just done).
struct LogCall {
  std::string path;
  std::string function;
  std::map<std::string, std::string, std::less<>> arguments;
  std::vector<std::string> when;
  std::map<std::string, std::string, std::less<>> counted;
};
struct LogFormat {
  std::string key;       // "<path>" for a Logger.log line, "<path>#<label>" for the others
  std::string path;      // the upstream file that prints it
  std::string label;     // "" for a Logger.log line, else epoch_begin, epoch_end, finished...
  std::string function;  // Logger.log, train_llama
  std::vector<LogPiece> pieces;
  std::optional<LogCall> call;
};

struct Interface {
  std::string package;  // neuronx-distributed
  std::string release;  // 2.29
  std::string repository;
  std::string commit;
  std::string source;  // where the record was read from (a file name, or "bundled:...")
  std::vector<ScriptInterface> scripts;
  std::vector<Launcher> launchers;
  std::vector<LogFormat> log_formats;  // by key

  // The script whose upstream path is `path` or ends with "/" + `path` (a path relative to a
  // scripts directory, e.g. "tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py"). An
  // unknown or ambiguous path is an error naming the candidates.
  Result<const ScriptInterface*> script(std::string_view path) const;
  const Launcher* launcher(std::string_view path) const;  // exact upstream path
};

// Reads a record (format 1). `source` names it in errors, which say where in the JSON.
Result<Interface> parse_interface(std::string_view json, std::string_view source);

// The records compiled in (interfaces/*.json that describe scripts), parsed once.
std::span<const Interface> bundled_interfaces();
const Interface* bundled_interface(std::string_view package, std::string_view release);

namespace detail {
struct BundledInterfaceText {
  std::string_view name;  // file name without .json
  std::string_view text;
};
// Defined in the generated bundled_interfaces_data.cpp.
std::span<const BundledInterfaceText> bundled_interface_texts();
}  // namespace detail

}  // namespace trnslurm::upstream
