"""What a launcher shell script passes to the script it runs: the run command's arguments (flags
paired with their values the way the script's own parser pairs them), the variables it exports,
and the variables it sets, each with the conditions it is set under. Values stay as written."""

import posixpath
import re

from gitsrc import ExtractError
from shell_words import ASSIGNMENT, commands, unquote

DEFAULT_ASSIGN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=([^}]*)\}")
VARIABLE_WORD = re.compile(r'^"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?$')
OPTION_WORD = re.compile(r"^--?[A-Za-z]")
NOT_RUNNERS = {"echo", "printf", "mkdir", "ls", "cat", "test", "[", "[["}
SWITCH_ACTIONS = {"store_true", "store_false", "store_const", "append_const", "count", "help", "version"}


def takes_value(flag):
    return flag["action"] not in SWITCH_ACTIONS and flag["nargs"] != 0


class _Word:
    def __init__(self, text, when=None):
        self.text, self.when = text, when or []


class LauncherReader:
    def __init__(self, src, scripts):
        self.src = src
        self.scripts = scripts  # recorded script path -> its record

    def launcher(self, path):
        state = {"env": {}, "settings": {}, "conditional_env": [], "conditional_settings": []}
        lists, runs = {}, []
        for cmd in commands(self.src.read(path), path):
            prefix, rest = self._split_assignments(cmd.words)
            run = self._run_target(path, rest)
            if run is not None:
                runs.append((cmd, prefix, run))
            elif not rest:
                for name, op, value in prefix:
                    self._assign(state, lists, cmd, name, op, value)
            elif rest[0] == "export":
                for word in rest[1:]:
                    m = ASSIGNMENT.match(word)
                    if m and m.group(2) == "=":
                        self._put(state, "env", cmd, m.group(1), word[m.end():])
            elif rest[0] == ":":
                for word in rest[1:]:
                    for name, value in DEFAULT_ASSIGN.findall(word):
                        self._put(state, "settings", cmd, name, value)
        if len(runs) != 1:
            raise ExtractError(f"{path}: {len(runs)} commands run a script; exactly one expected")
        cmd, prefix, (target, args) = runs[0]
        for name, _, value in prefix:
            self._put(state, "env", cmd, name, value)
        return {"runs": target, "args": self._args(path, target, args, lists), **state}

    @staticmethod
    def _split_assignments(words):
        prefix = []
        for i, word in enumerate(words):
            m = ASSIGNMENT.match(word)
            if not m:
                return prefix, words[i:]
            prefix.append((m.group(1), m.group(2), word[m.end():]))
        return prefix, []

    @staticmethod
    def _put(state, kind, cmd, name, value):
        if cmd.when:
            state["conditional_" + kind].append({"name": name, "value": value, "when": cmd.when})
        else:
            state[kind][name] = value

    def _assign(self, state, lists, cmd, name, op, value):
        self._collect_list(lists, cmd, name, op, value)
        if op == "=":
            self._put(state, "settings", cmd, name, value)

    @staticmethod
    def _collect_list(lists, cmd, name, op, value):
        """Variables that accumulate flags (EXTRA_ARGS+=" --x") expand where the run uses them."""
        text = unquote(value)
        if text is None:
            return
        words = text.split()
        if op == "=" and words and VARIABLE_WORD.match(words[0]) and VARIABLE_WORD.match(words[0]).group(1) == name:
            op, words = "+=", words[1:]
        entries = [_Word(w, cmd.when) for w in words]
        if op == "+=":
            lists.setdefault(name, []).extend(entries)
        else:
            lists[name] = entries

    def _run_target(self, path, words):
        words = [w for w in words if w not in ("exec", "sudo")]
        if not words or words[0] in NOT_RUNNERS:
            return None
        here = posixpath.dirname(path)
        for i, word in enumerate(words):
            bare = word.strip("'\"")
            if not bare.endswith((".py", ".sh")):
                continue
            bare = re.sub(r"^\$\{?SCRIPT_DIR\}?/", "", bare)
            candidate = posixpath.normpath(posixpath.join(here, bare))
            if self.src.exists(candidate):
                return candidate, words[i + 1:]
        return None

    def _args(self, path, target, words, lists):
        expanded = []
        for word in words:
            m = VARIABLE_WORD.match(word)
            if m and any(OPTION_WORD.match(e.text) for e in lists.get(m.group(1), [])):
                expanded.extend(lists[m.group(1)])
            else:
                expanded.append(_Word(word))
        if target.endswith(".sh"):
            return [self._entry(None, w.text, w) for w in expanded]
        if target not in self.scripts:
            raise ExtractError(f"{path}: runs {target}, which is not among the recorded scripts (add it)")
        return self._pair(self.scripts[target], expanded)

    def _pair(self, script, words):
        """Flags and values paired the way the script's parser pairs them."""
        by_name = {name: flag for flag in script["flags"] for name in flag["names"]}
        out, i = [], 0
        while i < len(words):
            word = words[i]
            name, eq, inline = word.text.partition("=")
            if not (word.text.startswith("-") and len(word.text) > 1):
                out.append(self._entry(None, word.text, word))
            elif eq and word.text.startswith("--"):
                out.append(self._entry(name, inline, word, known=name in by_name))
            elif word.text in by_name and not takes_value(by_name[word.text]):
                out.append(self._entry(word.text, None, word))
            elif word.text in by_name and by_name[word.text]["nargs"] not in (None, 1, "?"):
                values = []
                while i + 1 < len(words) and not OPTION_WORD.match(words[i + 1].text):
                    i += 1
                    values.append(words[i].text)
                out.append(self._entry(word.text, values, word))
            elif word.text in by_name or (i + 1 < len(words) and not words[i + 1].text.startswith("-")):
                value = words[i + 1].text if i + 1 < len(words) else None
                out.append(self._entry(word.text, value, word, known=word.text in by_name))
                i += value is not None
            else:
                out.append(self._entry(word.text, None, word, known=False))
            i += 1
        return out

    @staticmethod
    def _entry(flag, value, word, known=True):
        entry = {"flag": flag, "value": value}
        if word.when:
            entry["conditional"] = True
            entry["when"] = word.when
        if flag is not None and not known:
            entry["unknown_to_script"] = True  # paired by the next word's form, not by the parser
        return entry
