"""Just enough of the shell's grammar to read launcher scripts: words as written (quotes,
$(...), ${...}, backquotes and arrays kept whole), operators, newlines and comments, and the
if/elif/else/for/while structure around each simple command."""

import re

from gitsrc import ExtractError

OPERATORS = ("&&", "||", "|&", ";;", ">>", "&>", "<<", ">&", ";", "&", "|", "<", ">", "(", ")")
SEPARATORS = {";", "&&", "||", "|", "|&", "&"}
REDIRECTIONS = {">", ">>", "<", "&>", ">&"}
WORD_END = set(" \t\n;&|<>()")
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?=)")


class Token:
    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def is_word(self, *texts):
        return self.kind == "word" and (not texts or self.text in texts)


class Command:
    """One simple command: its words as written and the conditions it runs under."""

    def __init__(self, words, when, line):
        self.words, self.when, self.line = words, when, line


def _skip_group(text, i, close, path):
    """Index just past the `close` that ends a group opened before `i` ($(, ${, ( or `)."""
    depth = 1
    opener = {")": "(", "}": "{", "`": None}[close]
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and close != "`":
            i = _skip_single(text, i + 1, path)
            continue
        if c == '"' and close != "`":
            i = _skip_double(text, i + 1, path)
            continue
        if c == "$" and text[i + 1:i + 2] in ("(", "{"):
            i = _skip_expansion(text, i, path)
            continue
        if c == close and (opener is None or depth == 1):
            return i + 1
        if opener is not None and c == opener:
            depth += 1
        elif opener is not None and c == close:
            depth -= 1
        i += 1
    raise ExtractError(f"{path}: unterminated {close!r} group")


def _skip_single(text, i, path):
    end = text.find("'", i)
    if end < 0:
        raise ExtractError(f"{path}: unterminated single quote")
    return end + 1


def _skip_expansion(text, i, path):
    """Index past the $(...), ${...} or `...` starting at `i`, or None when none starts there."""
    if text[i] == "$" and text[i + 1:i + 2] in ("(", "{"):
        return _skip_group(text, i + 2, ")" if text[i + 1] == "(" else "}", path)
    if text[i] == "`":
        return _skip_group(text, i + 1, "`", path)
    return None


def _skip_double(text, i, path):
    while i < len(text):
        c = text[i]
        if c == '"':
            return i + 1
        i = i + 2 if c == "\\" else _skip_expansion(text, i, path) or i + 1
    raise ExtractError(f"{path}: unterminated double quote")


def _scan_word(text, i, path):
    start = i
    while i < len(text) and text[i] not in WORD_END:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "'":
            i = _skip_single(text, i + 1, path)
        elif c == '"':
            i = _skip_double(text, i + 1, path)
        else:
            i = _skip_expansion(text, i, path) or i + 1
        if i < len(text) and text[i] == "(" and ASSIGNMENT.match(text[start:i]) and text[i - 1] == "=":
            i = _skip_group(text, i + 1, ")", path)  # NAME=(array words)
    return i


def tokenize(text, path):
    tokens, i, line = [], 0, 1
    while i < len(text):
        c = text[i]
        if text.startswith("\\\n", i):
            i, line = i + 2, line + 1
        elif c in " \t":
            i += 1
        elif c == "\n":
            tokens.append(Token("nl", "\n", line))
            i, line = i + 1, line + 1
        elif c == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif c in WORD_END:
            op = next(o for o in OPERATORS if text.startswith(o, i))
            if op == "<<":
                raise ExtractError(f"{path}:{line}: here-documents are not read")
            tokens.append(Token("op", op, line))
            i += len(op)
        else:
            end = _scan_word(text, i, path)
            raw = text[i:end]
            tokens.append(Token("word", raw.replace("\\\n", ""), line))
            line += raw.count("\n")
            i = end
    return tokens


class _Frames:
    """The conditions around the current command: [{"test": ..., "holds": bool} | {"loop": ...}]."""

    def __init__(self, path):
        self.path = path
        self.stack = []

    def when(self):
        return [entry for frame in self.stack for entry in frame["current"]]

    def open_if(self, test):
        self.stack.append({"kind": "if", "tests": [test], "current": [{"test": test, "holds": True}]})

    def elif_(self, test, line):
        frame = self._top("if", "elif", line)
        frame["current"] = [{"test": t, "holds": False} for t in frame["tests"]] + [{"test": test, "holds": True}]
        frame["tests"].append(test)

    def else_(self, line):
        frame = self._top("if", "else", line)
        frame["current"] = [{"test": t, "holds": False} for t in frame["tests"]]

    def open_loop(self, header):
        self.stack.append({"kind": "loop", "current": [{"loop": header}]})

    def close(self, kind, word, line):
        self._top(kind, word, line)
        self.stack.pop()

    def _top(self, kind, word, line):
        if not self.stack or self.stack[-1]["kind"] != kind:
            raise ExtractError(f"{self.path}:{line}: {word!r} without its opening keyword")
        return self.stack[-1]

    def check_closed(self):
        if self.stack:
            raise ExtractError(f"{self.path}: an if or loop is not closed at the end of the file")


def _render(tokens):
    parts = [t.text for t in tokens]
    while parts and parts[-1] in (";", "\n"):
        parts.pop()
    return " ".join(p for p in parts if p != "\n")


def _until_keyword(tokens, i, keywords, path, line):
    """The tokens up to a keyword that starts a command, and the index just past that keyword."""
    start, at_start = i, False
    while i < len(tokens):
        t = tokens[i]
        if at_start and t.is_word(*keywords):
            return tokens[start:i], i + 1
        at_start = t.kind == "nl" or (t.kind == "op" and t.text in SEPARATORS)
        i += 1
    raise ExtractError(f"{path}:{line}: no {'/'.join(sorted(keywords))} after the condition")


def commands(text, path):
    """The simple commands of a script, each with the conditions it runs under."""
    tokens = tokenize(text, path)
    frames, out, words, i = _Frames(path), [], [], 0

    def flush(line):
        if words:
            out.append(Command(list(words), frames.when(), line))
            words.clear()

    while i < len(tokens):
        t = tokens[i]
        if not words and t.kind == "word":
            handled = _keyword(tokens, i, frames, path)
            if handled is not None:
                i = handled
                continue
        if t.kind == "word":
            words.append(t.text)
        elif t.kind == "nl" or t.text in SEPARATORS:
            flush(t.line)
        elif t.text in REDIRECTIONS:
            i += 1  # the redirection's target is not an argument
        elif t.text in ("(", ")"):
            flush(t.line)
        else:
            raise ExtractError(f"{path}:{t.line}: {t.text!r} is not read")
        i += 1
    flush(tokens[-1].line if tokens else 0)
    frames.check_closed()
    return out


def _keyword(tokens, i, frames, path):
    """Handles a reserved word that starts a command; the next token index, or None."""
    t = tokens[i]
    if t.text in ("if", "elif"):
        cond, after = _until_keyword(tokens, i + 1, {"then"}, path, t.line)
        frames.open_if(_render(cond)) if t.text == "if" else frames.elif_(_render(cond), t.line)
        return after
    if t.text in ("for", "while", "until"):
        cond, after = _until_keyword(tokens, i + 1, {"do"}, path, t.line)
        frames.open_loop(t.text + " " + _render(cond))
        return after
    if t.text == "else":
        frames.else_(t.line)
        return i + 1
    if t.text in ("fi", "done"):
        frames.close("if" if t.text == "fi" else "loop", t.text, t.line)
        return i + 1
    if t.text in ("case", "select", "function") or (i + 1 < len(tokens) and tokens[i + 1].text == "("
                                                    and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", t.text)):
        raise ExtractError(f"{path}:{t.line}: {t.text!r} blocks are not read")
    return None


def unquote(word):
    """The text of a word that is one quoted string (or unquoted), for splitting an assignment's
    value into the words it holds; None when the word mixes forms the reader does not split."""
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        inner = word[1:-1]
        return inner if word[0] == "'" or '"' not in inner else None
    return None if any(q in word for q in "'\"") else word
