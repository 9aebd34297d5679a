"""A progress line a trainer prints, as facts: the literal pieces and the fields of the f-string
(or str.format call) passed to print-like calls in one function."""

import ast
import string

from gitsrc import ExtractError
from pymodule import Repository, position, scope_nodes, where


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

    def log_format(self, path, qualname, prefix=None, callee="print"):
        """The one line `qualname` prints through a call whose name ends with `callee`."""
        module = self.repo.module(path)
        func = self.function(module, qualname)
        found = []
        for node in scope_nodes(func):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(callee) and node.args:
                pieces = _pieces(node.args[0], where(module, node))
                if pieces is not None and (prefix is None or signature(pieces).startswith(prefix)):
                    found.append(pieces)
        if len(found) != 1:
            which = f" starting {prefix!r}" if prefix else ""
            raise ExtractError(f"{path}: {len(found)} printed lines{which} in {qualname}; exactly one expected")
        return {"function": qualname, "pieces": found[0]}

    # ---- where a logging method is called from ------------------------------------------------
    def _params(self, path, qualname):
        func = self.function(self.repo.module(path), qualname)
        names = [a.arg for a in func.args.posonlyargs + func.args.args]
        return names[1:] if "." in qualname and names[:1] == ["self"] else names

    @staticmethod
    def _bound(call, params):
        """(argument list, keywords) of a call of the method itself, or of a call that hands the
        method and an argument tuple to a runner (xm.add_step_closure(logger.log, (a, b)))."""
        if len(call.args) >= 2 and isinstance(call.args[1], ast.Tuple):
            return call.args[1].elts, {}
        return call.args, {k.arg: k.value for k in call.keywords if k.arg}

    @staticmethod
    def _names(node, name):
        """Does `node` call or hand on `name` (a method's attribute name, or a local function)?"""
        def is_ref(n):
            return (isinstance(n, ast.Attribute) and n.attr == name) or (isinstance(n, ast.Name) and n.id == name)
        if not isinstance(node, ast.Call):
            return False
        return is_ref(node.func) or (node.args and is_ref(node.args[0]))

    def _sites(self, module, scope, name):
        return [n for n in ast.walk(scope) if self._names(n, name)]

    def _conditions(self, module, node, stop):
        """The tests of the ifs around `node` up to `stop`, innermost last ("not (...)" in an else)."""
        out, child, parent = [], node, module.parents.get(node)
        while parent is not None and parent is not stop:
            if isinstance(parent, ast.If) and child is not parent.test:
                test = ast.unparse(parent.test)
                out.append(test if child in parent.body else f"not ({test})")
            child, parent = parent, module.parents.get(parent)
        return list(reversed(out))

    def _loop_of(self, module, node, stop):
        parent = module.parents.get(node)
        while parent is not None and parent is not stop:
            if isinstance(parent, (ast.For, ast.While, ast.AsyncFor)):
                return parent
            parent = module.parents.get(parent)
        return None

    def log_call(self, log_path, log_qualname, path, qualname):
        """How `qualname` in `path` calls the logging method: the argument given for each of the
        method's parameters, the conditions it is called under, and for each argument that is a
        counter (`name += 1` in the same loop) whether the counter moves before or after the call,
        i.e. whether the value logged counts the step just done."""
        params = self._params(log_path, log_qualname)
        method = log_qualname.split(".")[-1]
        module = self.repo.module(path)
        func = self.function(module, qualname)
        sites = self._sites(module, func, method)
        if len(sites) != 1:
            raise ExtractError(f"{path}: {len(sites)} calls of {method} in {qualname}; exactly one expected")
        site = sites[0]
        args, keywords = self._bound(site, params)
        if len(args) > len(params) or any(k not in params for k in keywords):
            raise ExtractError(f"{where(module, site)}: the call does not fit {log_qualname}{tuple(params)}")
        arguments = {p: ast.unparse(a) for p, a in zip(params, args)}
        arguments.update({k: ast.unparse(v) for k, v in keywords.items()})
        # A call inside a local function (a step closure, a loop body) is placed where that
        # function is run: the levels from the call out to `qualname`.
        levels, place, outer = [], site, module.scope_of(site)
        while outer is not func and isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
            levels.append((place, outer))
            runs = [n for n in ast.walk(func) if self._names(n, outer.name) and n is not place]
            if len(runs) != 1:
                raise ExtractError(f"{path}: {outer.name} is run {len(runs)} times in {qualname}; exactly once expected")
            place, outer = runs[0], module.scope_of(runs[0])
        levels.append((place, func))
        when = [test for place, scope in reversed(levels) for test in self._conditions(module, place, scope)]
        counted = {}
        for expr in sorted(set(arguments.values())):
            for place, scope in levels:  # the innermost loop that moves the counter
                loop = self._loop_of(module, place, scope)
                bumps = [n for n in scope_nodes(loop) if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add)
                         and isinstance(n.target, ast.Name) and n.target.id == expr
                         and isinstance(n.value, ast.Constant) and n.value.value == 1] if loop else []
                if len(bumps) == 1:
                    counted[expr] = "before" if position(bumps[0]) < position(place) else "after"
                    break
        return {"path": path, "function": qualname, "arguments": arguments, "when": when, "counted": counted}
