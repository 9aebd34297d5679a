"""The command line a tree of config dataclasses gives under tyro (TorchTitan's ConfigManager),
read with `ast`: every field of the root class and of the config classes nested in it becomes
`--<section>.<field>`, unless its annotation carries `tyro.conf.Suppress`. Field types, defaults
and Literal choices are recorded as written; docstrings are never read.

A field whose default is built by a config registry from a subclass of its annotated class
(TorchTitan's `dataloader=HuggingFaceTextDataLoader.Config(...)`) shows that subclass's fields on
the command line (tyro narrows a field to the runtime type of its default), so the reader takes
the classes the given registry modules construct for each top-level field."""

import ast

from argparse_facts import json_literal
from gitsrc import ExtractError
from pymodule import Repository, where

SIMPLE = {"int", "float", "str", "bool"}


def _annotated_parts(node):
    """(inner type, metadata) of Annotated[T, ...], or (node, [])."""
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] == "Annotated":
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return elts[0], elts[1:]
    return node, []


def _union_members(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] == "Optional":
        return [node.slice, ast.Constant(None)]
    return [node]


def _is_none(node):
    return isinstance(node, ast.Constant) and node.value is None


class ConfigReader:
    def __init__(self, src):
        self.repo = Repository(src)

    # ---- classes ------------------------------------------------------------------------------
    def nested_class(self, module, dotted, context):
        """The class a dotted name (`Trainer.Config`, `CheckpointManager.Config`) stands for in
        `module`: (module, ClassDef), or None when it is not a class of the repository."""
        parts = dotted.split(".")
        try:
            kind = self.repo.definition(module, parts[0], context)
        except ExtractError:
            return None
        if kind[0] == "module":
            if len(parts) < 2:
                return None
            mod = kind[1]
            try:
                kind = self.repo.definition(mod, parts[1], context)
            except ExtractError:
                return None
            parts = parts[1:]
        if kind[0] != "class":
            return None
        mod, node = kind[1], kind[2]
        for part in parts[1:]:
            node = next((n for n in node.body if isinstance(n, ast.ClassDef) and n.name == part), None)
            if node is None:
                return None
        return mod, node

    def class_at(self, path, qualname):
        module = self.repo.module(path)
        found = self.nested_class(module, qualname, path)
        if found is None:
            raise ExtractError(f"{path}: no class {qualname}")
        return found

    def _fields(self, module, cls):
        """(name, annotation, value, node) of a dataclass's fields, bases first."""
        out = []
        for base in cls.bases:
            found = self.nested_class(module, ast.unparse(base), where(module, cls))
            if found is not None:
                out.extend(self._fields(*found))
        names = {f[0] for f in out}
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            if "ClassVar" in ast.unparse(stmt.annotation):
                continue
            entry = (stmt.target.id, stmt.annotation, stmt.value, module, stmt)
            if stmt.target.id in names:
                out = [entry if f[0] == stmt.target.id else f for f in out]
            else:
                out.append(entry)
        return out

    # ---- one field ------------------------------------------------------------------------------
    def _default(self, value):
        """(literal default or {"expr": ...}, class expression of a default_factory or None)."""
        if value is None:
            return {"expr": "<required>"}, None
        if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "field":
            kw = {k.arg: k.value for k in value.keywords}
            if "default" in kw:
                return self._default(kw["default"])[0], None
            factory = kw.get("default_factory")
            if factory is None:
                return {"expr": ast.unparse(value)}, None
            if isinstance(factory, ast.Lambda):
                literal = json_literal(factory.body)
                return (literal if literal is not None or _is_none(factory.body) else {"expr": ast.unparse(factory.body)}), None
            name = ast.unparse(factory)
            if name in ("list", "tuple"):
                return [], None
            if name == "dict":
                return {"expr": "dict()"}, None
            return None, name
        literal = json_literal(value)
        if literal is not None or _is_none(value):
            return literal, None
        return {"expr": ast.unparse(value)}, None

    def _kind(self, annotation):
        """(type text, choices, optional) of a leaf field's annotation."""
        members = _union_members(annotation)
        optional = any(_is_none(m) for m in members)
        members = [m for m in members if not _is_none(m)]
        texts = sorted({ast.unparse(m) for m in members})
        if len(members) == 1 and isinstance(members[0], ast.Subscript) and \
                ast.unparse(members[0].value).split(".")[-1] == "Literal":
            sl = members[0].slice
            values = [json_literal(e) for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl])]
            kinds = {type(v).__name__ for v in values}
            return (kinds.pop() if len(kinds) == 1 and kinds <= SIMPLE else "str"), values, optional
        if texts == ["float", "int"]:
            return "float", None, optional
        if len(texts) == 1 and texts[0] in SIMPLE:
            return texts[0], None, optional
        if texts == ["list[str]"]:
            return "list[str]", None, optional
        return "other:" + " | ".join(texts), None, optional

    # ---- the tree ---------------------------------------------------------------------------------
    def fields(self, module, cls, narrowed=None, prefix=""):
        """Every command-line field under a config class, in source order: dicts with name
        (dotted), type, choices, optional, default, suppressed (bool), declared (path:line)."""
        narrowed = narrowed or {}
        out = []
        for name, annotation, value, mod, node in self._fields(module, cls):
            inner, meta = _annotated_parts(annotation)
            dotted = prefix + name
            if any("Suppress" in ast.unparse(m) for m in meta):
                continue
            default, factory = self._default(value)
            target = None
            if dotted in narrowed:
                target = narrowed[dotted]
            elif factory is not None:
                target = self.nested_class(mod, factory, where(mod, node))
            if target is None:
                members = [m for m in _union_members(inner) if not _is_none(m)]
                if len(members) == 1 and isinstance(members[0], (ast.Name, ast.Attribute)) and \
                        ast.unparse(members[0]) not in SIMPLE:
                    target = self.nested_class(mod, ast.unparse(members[0]), where(mod, node))
            if target is not None and self._is_config(*target):
                out.extend(self.fields(target[0], target[1], narrowed, dotted + "."))
                continue
            kind, choices, optional = self._kind(inner)
            out.append({"name": dotted, "type": kind, "choices": choices, "optional": optional,
                        "default": default if factory is None else {"expr": factory + "()"},
                        "declared": where(mod, node)})
        return out

    @staticmethod
    def _is_config(module, cls):
        decorated = any("dataclass" in ast.unparse(d) for d in cls.decorator_list)
        return decorated or any(isinstance(s, ast.AnnAssign) for s in cls.body)

    # ---- what the registries construct ------------------------------------------------------------
    def registry_classes(self, paths, call_name):
        """({top-level field: (module, ClassDef)}, {field: [other classes]}) from the keyword
        arguments `field=X.Config(...)` of every `call_name(...)` call in the registry modules.
        Where configs build a field from different classes, the one most of them use is taken
        and the others are listed: tyro shows the fields of the class a given --config builds,
        which for those is not the same for every config."""
        counts = {}
        for path in paths:
            module = self.repo.module(path)
            for node in ast.walk(module.tree):
                if not (isinstance(node, ast.Call) and ast.unparse(node.func) == call_name):
                    continue
                for kw in node.keywords:
                    if kw.arg is None or not isinstance(kw.value, ast.Call):
                        continue
                    found = self.nested_class(module, ast.unparse(kw.value.func), where(module, node))
                    if found is None:
                        continue
                    key = f"{found[0].path}:{ast.unparse(kw.value.func)}"
                    entry = counts.setdefault(kw.arg, {}).setdefault(key, [0, found])
                    entry[0] += 1
        chosen, varies = {}, {}
        for name, classes in counts.items():
            ranked = sorted(classes.items(), key=lambda item: (-item[1][0], item[0]))
            chosen[name] = ranked[0][1][1]
            if len(ranked) > 1:
                varies[name] = [key for key, _ in ranked[1:]]
        return chosen, varies
