#pragma once

#include <string_view>

#include "trnslurm/upstream/interface.hpp"

// A small interface record in the format tools/upstream-interface/extract.py writes: a strict
// script with every kind of flag, and a lenient one, under two directories.
namespace trnslurm::upstream::test {

inline constexpr std::string_view mini_record = R"json({
  "format": 1, "package": "mini", "release": "1.0", "repository": "https://example.invalid/mini",
  "commit": "0123456789abcdef0123456789abcdef01234567", "extracted_by": "tools/upstream-interface/extract.py",
  "scripts": {
    "examples/a/train.py": {"parse": "strict", "parser": "examples/a/train.py", "flags": [
      {"names": ["--batch_size"], "dest": "batch_size", "action": "store", "type": "int", "required": false,
       "default": 8, "nargs": null, "choices": null},
      {"names": ["--lr"], "dest": "lr", "action": "store", "type": "float", "required": false,
       "default": 0.0004, "nargs": null, "choices": null},
      {"names": ["--use_zero_1"], "dest": "use_zero_1", "action": "store_true", "type": null, "required": false,
       "default": null, "nargs": null, "choices": null},
      {"names": ["--use_mix_precision"], "dest": "use_mix_precision", "action": "store_true", "type": null,
       "required": false, "default": null, "nargs": null, "choices": null},
      {"names": ["--name"], "dest": "name", "action": "store", "type": "str", "required": true,
       "default": null, "nargs": null, "choices": null},
      {"names": ["--layers"], "dest": "layers", "action": "store", "type": "int", "required": false,
       "default": null, "nargs": "+", "choices": null},
      {"names": ["--mode"], "dest": "mode", "action": "store", "type": null, "required": false,
       "default": "fast", "nargs": null, "choices": ["fast", "slow"]},
      {"names": ["--fuse_qkv"], "dest": "fuse_qkv", "action": "store", "type": "bool", "required": false,
       "default": false, "nargs": null, "choices": null},
      {"names": ["--tags"], "dest": "tags", "action": "append", "type": "str", "required": false,
       "default": null, "nargs": null, "choices": null},
      {"names": ["-v", "--verbose"], "dest": "verbose", "action": "count", "type": null, "required": false,
       "default": 0, "nargs": null, "choices": null},
      {"names": ["--level"], "dest": "level", "action": "store", "type": "int", "required": false,
       "default": 1, "nargs": null, "choices": [1, 2]},
      {"names": ["--out"], "dest": "out", "action": "store", "type": null, "required": false,
       "default": {"expr": "os.path.join('a', 'b')"}, "nargs": "?", "choices": null}
    ]},
    "examples/b/train.py": {"parse": "known", "parser": "src/pkg/conv.py", "flags": [
      {"names": ["--steps"], "dest": "steps", "action": "store", "type": "int", "required": false,
       "default": null, "nargs": null, "choices": null},
      {"names": ["input"], "dest": "input", "action": "store", "type": null, "required": false,
       "default": null, "nargs": null, "choices": null}
    ]}
  },
  "launchers": {
    "examples/a/run.sh": {"runs": "examples/a/train.py",
      "args": [{"flag": "--batch_size", "value": "$MBS"}, {"flag": "--layers", "value": ["1", "2"]},
               {"flag": "--use_zero_1", "value": null, "conditional": true, "when": [{"test": "[ x ]", "holds": true}]}],
      "env": {"MALLOC_ARENA_MAX": "64"}, "settings": {"MBS": "1"},
      "conditional_env": [], "conditional_settings": []}
  },
  "log_formats": {
    "examples/a/logger.py": {"function": "Logger.log", "pieces": ["LOG ", {"field": "step"}, " loss ",
      {"field": "loss", "spec": ".4f"}], "call": {"path": "examples/a/train.py", "function": "train",
      "arguments": {"step": "global_step", "loss": "loss"}, "when": ["global_step % 2 == 0"],
      "counted": {"global_step": "before"}}},
    "examples/a/train.py#finished": {"function": "train", "pieces": ["Done"]}
  }
})json";

}  // namespace trnslurm::upstream::test
