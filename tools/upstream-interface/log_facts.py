"""A progress line a trainer prints, as facts: the literal pieces and the fields of the f-string
(or str.format call) passed to print-like calls in one function."""

import ast
import string

from gitsrc import ExtractError
from pymodule import Repository, scope_nodes, where


def _merge(pieces):
    out = []
    for piece in pieces:
        if isinstance(piece, str) and out and isinstance(out[-1], str):
            out[-1] += piece
        elif piece != "":
            out.append(piece)
    return out


def _field(expr, conversion=-1, spec=None):
    field = {"field": ast.unparse(expr)}
    if conversion != -1:
        field["conversion"] = chr(conversion)
    if spec:
        field["spec"] = spec
    return field


def _spec(node):
    if node is None:
        return None
    if all(isinstance(v, ast.Constant) for v in node.values):
        return "".join(v.value for v in node.values)
    return ast.unparse(node)


def _fstring_pieces(node):
    pieces = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            pieces.append(value.value)
        else:
            pieces.append(_field(value.value, value.conversion, _spec(value.format_spec)))
    return pieces


def _format_pieces(fmt, call, context):
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise ExtractError(f"{context}: str.format with */** arguments cannot be read")
    keywords = {k.arg: k.value for k in call.keywords}
    pieces, auto = [], 0
    for literal, name, spec, conversion in string.Formatter().parse(fmt):
        pieces.append(literal)
        if name is None:
            continue
        if name == "":
            index, auto = auto, auto + 1
        elif name.isdigit():
            index = int(name)
        else:
            index = None
        expr = call.args[index] if index is not None and index < len(call.args) else keywords.get(name)
        if expr is None:
            raise ExtractError(f"{context}: format field {{{name}}} has no argument")
        pieces.append(_field(expr, ord(conversion) if conversion else -1, spec))
    return pieces


def _pieces(arg, context):
    if isinstance(arg, ast.JoinedStr):
        return _merge(_fstring_pieces(arg))
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "format" \
            and isinstance(arg.func.value, ast.Constant) and isinstance(arg.func.value.value, str):
        return _merge(_format_pieces(arg.func.value.value, arg, context))
    return None


def signature(pieces):
    """The line with every field written {}: what a log-format selector matches."""
    return "".join(p if isinstance(p, str) else "{}" for p in pieces)


class LogReader:
    def __init__(self, src):
        self.repo = Repository(src)

    def function(self, module, qualname):
        scope, node = module.tree, None
        for part in qualname.split("."):
            node = next((n for n in scope.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                         and n.name == part), None)
            if node is None:
                raise ExtractError(f"{module.path}: no {qualname}")
            scope = node
        if isinstance(node, ast.ClassDef):
            raise ExtractError(f"{module.path}: {qualname} is a class, not a function")
        return node

    def log_format(self, path, qualname, prefix=None):
        module = self.repo.module(path)
        func = self.function(module, qualname)
        found = []
        for node in scope_nodes(func):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("print") and node.args:
                pieces = _pieces(node.args[0], where(module, node))
                if pieces is not None and (prefix is None or signature(pieces).startswith(prefix)):
                    found.append(pieces)
        if len(found) != 1:
            which = f" starting {prefix!r}" if prefix else ""
            raise ExtractError(f"{path}: {len(found)} printed lines{which} in {qualname}; exactly one expected")
        return {"function": qualname, "pieces": found[0]}
