"""The command-line interface of a Python script, read from its argparse calls with `ast`:
the parser it parses with (followed into the function or method that builds it, in whatever
file of the repository that is), every add_argument on it and on its groups, and whether it
parses strictly (parse_args) or leniently (parse_known_args). Help strings are never read."""

import ast
import math

from gitsrc import ExtractError
from pymodule import Repository, position, scope_nodes, where

PARSE_METHODS = {
    "parse_args": "strict",
    "parse_intermixed_args": "strict",
    "parse_known_args": "known",
    "parse_known_intermixed_args": "known",
}
PARSER_CONSTRUCTORS = {"argparse.ArgumentParser", "ArgumentParser"}
GROUP_METHODS = {"add_argument_group", "add_mutually_exclusive_group"}
SIMPLE_TYPES = {"int", "float", "str", "bool"}
NARGS_WORDS = {"?", "*", "+"}


def json_literal(node):
    """The JSON value of a literal expression, or None when it is not one."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if _json_safe(value) else None


def _json_safe(value):
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(_json_safe(v) for v in value)
    return False


def _plain(value):
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


def _dest(names):
    longs = [n for n in names if n.startswith("--")]
    chosen = longs[0] if longs else names[0]
    return chosen.lstrip("-").replace("-", "_")


class Facts:
    def __init__(self, parser_file):
        self.parser_file = parser_file
        self.flags = []


class ArgparseReader:
    def __init__(self, src):
        self.repo = Repository(src)

    # ---- the script ---------------------------------------------------------------------------
    def script(self, path):
        module = self.repo.module(path)
        calls = [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr in PARSE_METHODS]
        if not calls:
            raise ExtractError(f"{path}: no parse_args/parse_known_args call: cannot find the script's parser")
        modes = {PARSE_METHODS[c.func.attr] for c in calls}
        receivers = {ast.unparse(c.func.value) for c in calls}
        if len(calls) > 1 and (len(modes) > 1 or len(receivers) > 1):
            lines = ", ".join(str(c.lineno) for c in sorted(calls, key=position))
            raise ExtractError(f"{path}: several parse calls (lines {lines}): which one is the script's is unclear")
        call = min(calls, key=position)
        facts = self.parser_of(module, module.scope_of(call), call.func.value, call.lineno)
        self._check_unique(path, facts.flags)
        return {"parse": modes.pop(), "parser": facts.parser_file, "flags": facts.flags}

    def _check_unique(self, path, flags):
        seen = set()
        for flag in flags:
            for name in flag["names"]:
                if name in seen:
                    raise ExtractError(f"{path}: option {name} is added twice (argparse would refuse it)")
                seen.add(name)

    # ---- where a parser value comes from --------------------------------------------------------
    def parser_of(self, module, scope, expr, line):
        if isinstance(expr, ast.Name):
            return self._parser_of_name(module, scope, expr.id, line)
        if isinstance(expr, ast.Call):
            if ast.unparse(expr.func) in PARSER_CONSTRUCTORS:
                return Facts(module.path)
            kind, target_module, func = self.callee(module, scope, expr.func, line)
            if kind != "def":
                raise ExtractError(f"{where(module, expr)}: {ast.unparse(expr.func)} is not a function that returns a parser")
            return self._parser_returned_by(target_module, func)
        raise ExtractError(f"{where(module, expr)}: cannot tell which parser {ast.unparse(expr)!r} is")

    def _parser_of_name(self, module, scope, name, line):
        assign = self._last_assignment(scope, name, line)
        if assign is None and scope is not module.tree:
            scope, assign = module.tree, self._last_assignment(module.tree, name, line)
        if assign is None:
            raise ExtractError(f"{module.path}:{line}: cannot find where the parser {name!r} is made")
        facts = self.parser_of(module, scope, assign.value, assign.lineno)
        facts.flags.extend(self._added_in(module, scope, name, assign.lineno, line))
        return facts

    @staticmethod
    def _last_assignment(scope, name, line):
        found = None
        for node in scope_nodes(scope):
            if node.lineno >= line:
                break
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                found = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name \
                    and node.value is not None:
                found = node
        return found

    def _parser_returned_by(self, module, func):
        returns = [n for n in scope_nodes(func) if isinstance(n, ast.Return) and n.value is not None]
        if len(returns) != 1:
            raise ExtractError(f"{where(module, func)}: {func.name} has {len(returns)} return values; one parser expected")
        return self.parser_of(module, func, returns[0].value, returns[0].lineno)

    # ---- the add_argument calls on a parser variable --------------------------------------------
    def _added_in(self, module, scope, name, start, end):
        nodes = [n for n in scope_nodes(scope) if start <= getattr(n, "lineno", 0) <= end]
        aliases = {name}
        for node in nodes:
            if isinstance(node, ast.Assign) and self._is_method_call(node.value, aliases, GROUP_METHODS):
                aliases.update(t.id for t in node.targets if isinstance(t, ast.Name))
        flags = []
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            if self._is_method_call(node, aliases, {"add_argument"}):
                flags.append(self.flag(module, node))
            elif self._is_method_call(node, aliases, {"set_defaults", "add_subparsers"}):
                raise ExtractError(f"{where(module, node)}: {node.func.attr} is not recorded; refusing a partial record")
            else:
                flags.extend(self._added_by_callee(module, scope, node, aliases))
        return flags

    @staticmethod
    def _is_method_call(node, receivers, methods):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return False
        on_receiver = isinstance(node.func.value, ast.Name) and node.func.value.id in receivers
        return on_receiver and (not methods or node.func.attr in methods)

    def _added_by_callee(self, module, scope, call, aliases):
        """A parser handed to a helper (`add_args(parser)`) gets that helper's arguments."""
        passed = [i for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id in aliases]
        passed += [kw.arg for kw in call.keywords if isinstance(kw.value, ast.Name) and kw.value.id in aliases]
        if not passed:
            return []
        kind, target_module, func = self.callee(module, scope, call.func, call.lineno)
        if kind != "def":
            raise ExtractError(f"{where(module, call)}: the parser is passed to {ast.unparse(call.func)}, which cannot be followed")
        params = [a.arg for a in func.args.posonlyargs + func.args.args]
        if self._is_bound_method(target_module, func):
            params = params[1:]
        flags = []
        for which in passed:
            param = params[which] if isinstance(which, int) and which < len(params) else which
            if not isinstance(param, str):
                raise ExtractError(f"{where(module, call)}: cannot tell which parameter of {func.name} gets the parser")
            flags.extend(self._added_in(target_module, func, param, func.lineno, func.end_lineno))
        return flags

    @staticmethod
    def _is_bound_method(module, func):
        if module.class_of(func) is None:
            return False
        return not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)

    # ---- what a called name is ------------------------------------------------------------------
    def callee(self, module, scope, func_expr, line):
        if isinstance(func_expr, ast.Name):
            local = next((n for n in scope_nodes(scope) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                          and n.name == func_expr.id), None) if scope is not module.tree else None
            if local is not None:
                return ("class" if isinstance(local, ast.ClassDef) else "def", module, local)
            return self.repo.definition(module, func_expr.id, where(module, func_expr))
        if isinstance(func_expr, ast.Attribute):
            owner = self._owner(module, scope, func_expr.value, line)
            if owner[0] == "module":
                return self.repo.definition(owner[1], func_expr.attr, where(module, func_expr))
            found = self._method(owner[1], owner[2], func_expr.attr, where(module, func_expr),
                                 skip_own=owner[0] == "super")
            if found is None:
                raise ExtractError(f"{where(module, func_expr)}: no method {func_expr.attr!r} on {owner[2].name}")
            return ("def",) + found
        raise ExtractError(f"{where(module, func_expr)}: cannot follow a call to {ast.unparse(func_expr)!r}")

    def _owner(self, module, scope, expr, line):
        """("class", module, ClassDef) for an instance or a class, or ("module", module)."""
        context = where(module, expr)
        if isinstance(expr, ast.Call) and ast.unparse(expr.func) == "super":
            cls = module.class_of(scope) if scope is not module.tree else None
            if cls is None:
                raise ExtractError(f"{context}: super() outside a method")
            return ("super", module, cls)
        if isinstance(expr, ast.Call):
            kind = self.callee(module, scope, expr.func, line)
            if kind[0] != "class":
                raise ExtractError(f"{context}: cannot tell what {ast.unparse(expr.func)}() returns")
            return kind
        if isinstance(expr, ast.Name) and expr.id == "self" and scope is not module.tree:
            cls = module.class_of(scope)
            if cls is not None:
                return ("class", module, cls)
        if isinstance(expr, ast.Name):
            assign = self._last_assignment(scope, expr.id, line)
            if assign is None and scope is not module.tree:
                scope, assign = module.tree, self._last_assignment(module.tree, expr.id, line)
            if assign is not None:
                return self._owner(module, scope, assign.value, assign.lineno)
            return self.repo.definition(module, expr.id, context)
        raise ExtractError(f"{context}: cannot tell what {ast.unparse(expr)!r} is")

    def _method(self, module, cls, name, context, skip_own=False):
        """The method `name` of a class, looked for in the class and then its bases, in order."""
        if not skip_own:
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                    return (module, stmt)
        for base in cls.bases:
            kind = self._owner(module, module.tree, base, cls.lineno) if isinstance(base, ast.Attribute) \
                else self.repo.definition(module, ast.unparse(base), context) if isinstance(base, ast.Name) else None
            if kind is None or kind[0] != "class":
                raise ExtractError(f"{context}: cannot follow base class {ast.unparse(base)} of {cls.name}")
            found = self._method(kind[1], kind[2], name, context)
            if found is not None:
                return found
        return None

    # ---- one add_argument call ------------------------------------------------------------------
    def flag(self, module, call):
        context = where(module, call)
        if any(kw.arg is None for kw in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
            raise ExtractError(f"{context}: add_argument with */** arguments cannot be read")
        names = [json_literal(a) for a in call.args]
        if not names or not all(isinstance(n, str) and n for n in names):
            raise ExtractError(f"{context}: add_argument with option names that are not string literals")
        kw = {k.arg: k.value for k in call.keywords}
        positional = not names[0].startswith("-")
        return {
            "names": names,
            "dest": self._literal_str(kw, "dest", context) or (names[0] if positional else _dest(names)),
            "action": self._action(kw),
            "type": self._type(kw),
            "required": self._required(kw, context),
            "default": self._default(kw),
            "nargs": self._nargs(kw, context),
            "choices": self._choices(kw, context),
        }

    @staticmethod
    def _literal_str(kw, key, context):
        if key not in kw:
            return None
        value = json_literal(kw[key])
        if not isinstance(value, str):
            raise ExtractError(f"{context}: {key}= is not a string literal")
        return value

    @staticmethod
    def _action(kw):
        if "action" not in kw:
            return "store"
        value = json_literal(kw["action"])
        return value if isinstance(value, str) else "other:" + ast.unparse(kw["action"])

    @staticmethod
    def _type(kw):
        if "type" not in kw:
            return None
        text = ast.unparse(kw["type"])
        return text if text in SIMPLE_TYPES else "other:" + text

    @staticmethod
    def _required(kw, context):
        if "required" not in kw:
            return False
        value = json_literal(kw["required"])
        if not isinstance(value, bool):
            raise ExtractError(f"{context}: required= is not True or False")
        return value

    @staticmethod
    def _default(kw):
        if "default" not in kw:
            return None
        node = kw["default"]
        value = json_literal(node)
        if value is None and not (isinstance(node, ast.Constant) and node.value is None):
            return {"expr": ast.unparse(node)}
        return _plain(value)

    @staticmethod
    def _nargs(kw, context):
        if "nargs" not in kw:
            return None
        value = json_literal(kw["nargs"])
        if (isinstance(value, int) and not isinstance(value, bool) and value >= 0) or value in NARGS_WORDS:
            return value
        raise ExtractError(f"{context}: nargs={ast.unparse(kw['nargs'])} is not recorded (int, '?', '*' or '+')")

    @staticmethod
    def _choices(kw, context):
        if "choices" not in kw:
            return None
        value = json_literal(kw["choices"])
        if not isinstance(value, (list, tuple)):
            raise ExtractError(f"{context}: choices={ast.unparse(kw['choices'])} is not a literal list")
        return _plain(value)
