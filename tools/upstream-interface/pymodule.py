"""Python sources of one revision as syntax trees, with the lookups the extractors share:
the scope a node sits in, the statements of a scope, and names resolved through imports to the
definitions they stand for (inside the repository only)."""

import ast
import posixpath

from gitsrc import ExtractError

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def where(module, node):
    return f"{module.path}:{getattr(node, 'lineno', 0)}"


def position(node):
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


class Module:
    def __init__(self, path, text):
        self.path = path
        try:
            self.tree = ast.parse(text, filename=path)
        except SyntaxError as e:
            raise ExtractError(f"{path}:{e.lineno}: not Python that this python3 parses ({e.msg})") from e
        self.parents = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node

    def scope_of(self, node):
        """The function (or module) whose local names `node` sees."""
        node = self.parents.get(node)
        while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            node = self.parents.get(node)
        return node if node is not None else self.tree

    def class_of(self, func):
        parent = self.parents.get(func)
        return parent if isinstance(parent, ast.ClassDef) else None

    def top_level(self, name):
        """The module-level statement binding `name`: a def, a class or an import."""
        found = None
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == name:
                found = stmt
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    if (alias.asname or alias.name.split(".")[0]) == name:
                        found = (stmt, alias)
        return found


def scope_nodes(scope):
    """Every node of a scope's own body, not of the functions or classes defined in it, in
    source order."""
    body = scope.body if isinstance(scope.body, list) else [scope.body]
    out = []
    stack = list(body)
    while stack:
        node = stack.pop()
        if hasattr(node, "lineno"):
            out.append(node)
        if not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return sorted(out, key=position)


class Repository:
    """Modules of one revision, loaded on demand."""

    def __init__(self, src):
        self.src = src
        self._modules = {}

    def module(self, path):
        if path not in self._modules:
            self._modules[path] = Module(path, self.src.read(path))
        return self._modules[path]

    def module_path(self, importer, dotted, level):
        """The file of an imported module, looked for beside the importer, under src/ and at the
        repository's top; None when the module is not in the repository (torch, argparse...)."""
        parts = [p for p in dotted.split(".") if p]
        if level:
            base = posixpath.dirname(importer.path)
            for _ in range(level - 1):
                base = posixpath.dirname(base)
            bases = [base]
        else:
            bases = [posixpath.dirname(importer.path), "src", ""]
        for base in bases:
            stem = posixpath.join(base, *parts) if parts else base
            for candidate in (stem + ".py", posixpath.join(stem, "__init__.py")):
                if self.src.exists(candidate):
                    return candidate
        return None

    def definition(self, module, name, context):
        """What a module-level name stands for: ("def", module, node), ("class", module, node) or
        ("module", module). Follows `from x import name` into the repository."""
        bound = module.top_level(name)
        if bound is None:
            raise ExtractError(f"{context}: cannot find where {name!r} is defined in {module.path}")
        if isinstance(bound, ast.ClassDef):
            return ("class", module, bound)
        if isinstance(bound, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ("def", module, bound)
        stmt, alias = bound
        if isinstance(stmt, ast.Import):
            path = self.module_path(module, alias.name if alias.asname else alias.name.split(".")[0], 0)
            if path is None:
                raise ExtractError(f"{context}: module {alias.name!r} is not in the repository")
            return ("module", self.module(path))
        path = self.module_path(module, stmt.module or "", stmt.level)
        if path is None:
            raise ExtractError(f"{context}: {name!r} comes from {stmt.module!r}, which is not in the repository")
        imported = self.module(path)
        if imported.top_level(alias.name) is None:
            sub = self.module_path(imported, alias.name, 1) if path.endswith("__init__.py") else None
            if sub is not None:
                return ("module", self.module(sub))
        return self.definition(imported, alias.name, context)
