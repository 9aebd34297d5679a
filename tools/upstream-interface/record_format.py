"""The shape of an interface record (docs/upstream.md): problems() lists what is wrong with one,
as "where: what" strings; an empty list means well-formed. Used by the extractors before they
write and by the tests on every committed record."""

import re

COMMIT = re.compile(r"^[0-9a-f]{40}$")
SIMPLE_TYPES = {"int", "float", "str", "bool"}
NARGS_WORDS = {"?", "*", "+"}
HEADER = {"format": int, "package": str, "repository": str, "release": str, "commit": str, "extracted_by": str}


class _Check:
    def __init__(self):
        self.problems = []

    def fail(self, where, what):
        self.problems.append(f"{where}: {what}")

    def typed(self, where, value, kind, what):
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.fail(where, f"{what} expected")
            return False
        return True

    def keys(self, where, obj, required, optional=()):
        if not self.typed(where, obj, dict, "an object"):
            return False
        for key in required:
            if key not in obj:
                self.fail(where, f"missing {key!r}")
        for key in obj:
            if key not in required and key not in optional:
                self.fail(where, f"unknown key {key!r}")
        return all(key in obj for key in required)


def problems(record):
    """A script interface record (scripts, launchers, log_formats) or a tool record read from
    documentation pages (pages, tool)."""
    check = _Check()
    body = ["pages", "tool"] if isinstance(record, dict) and "tool" in record else ["scripts", "launchers", "log_formats"]
    if not check.keys("record", record, list(HEADER) + body, [] if "tool" in body else ["torchtitan"]):
        return check.problems
    for key, kind in HEADER.items():
        check.typed(key, record[key], kind, f"{kind.__name__}")
    if record["format"] != 1:
        check.fail("format", f"unknown format {record['format']!r} (this reader knows 1)")
    if not COMMIT.match(str(record["commit"])):
        check.fail("commit", "a full 40-hex commit hash expected")
    if not str(record["repository"]).startswith("https://"):
        check.fail("repository", "a public https:// URL expected")
    if "tool" in record:
        _tool(check, record)
        return check.problems
    if check.typed("scripts", record["scripts"], dict, "an object") and not record["scripts"]:
        check.fail("scripts", "no script recorded")
    for path, script in _items(check, "scripts", record["scripts"]):
        _script(check, f"scripts[{path}]", script)
    for path, launcher in _items(check, "launchers", record["launchers"]):
        _launcher(check, f"launchers[{path}]", launcher, record["scripts"], record["launchers"])
    for key, fmt in _items(check, "log_formats", record["log_formats"]):
        _log_format(check, f"log_formats[{key}]", fmt)
    if "torchtitan" in record:
        _torchtitan(check, record)
    return check.problems


def _items(check, where, obj):
    return sorted(obj.items()) if check.typed(where, obj, dict, "an object") else []


def _script(check, where, script):
    if not check.keys(where, script, ["parse", "parser", "flags"], ["allow_abbrev"]):
        return
    if "allow_abbrev" in script:
        check.typed(where + ".allow_abbrev", script["allow_abbrev"], bool, "true or false")
    if script["parse"] not in ("strict", "known"):
        check.fail(where, f"parse must be 'strict' or 'known', not {script['parse']!r}")
    check.typed(where + ".parser", script["parser"], str, "a path")
    if not check.typed(where + ".flags", script["flags"], list, "a list"):
        return
    seen = set()
    for i, flag in enumerate(script["flags"]):
        _flag(check, f"{where}.flags[{i}]", flag)
        for name in flag.get("names", []) if isinstance(flag, dict) else []:
            if name in seen:
                check.fail(f"{where}.flags[{i}]", f"{name} is recorded twice")
            seen.add(name)


def _flag(check, where, flag):
    keys = ["names", "dest", "action", "type", "required", "default", "nargs", "choices"]
    if not check.keys(where, flag, keys):
        return
    names = flag["names"]
    if not (isinstance(names, list) and names and all(isinstance(n, str) and n for n in names)):
        check.fail(where, "names must be a non-empty list of option strings")
    check.typed(where + ".dest", flag["dest"], str, "a string")
    check.typed(where + ".action", flag["action"], str, "a string")
    kind = flag["type"]
    if kind is not None and kind not in SIMPLE_TYPES and not (isinstance(kind, str) and kind.startswith("other:")):
        check.fail(where, f"type must be int, float, str, bool, other:<expr> or null, not {kind!r}")
    check.typed(where + ".required", flag["required"], bool, "true or false")
    default = flag["default"]
    if isinstance(default, dict) and (set(default) != {"expr"} or not isinstance(default["expr"], str)):
        check.fail(where, "a non-literal default is {\"expr\": \"<source>\"}")
    nargs = flag["nargs"]
    if not (nargs is None or nargs in NARGS_WORDS or (isinstance(nargs, int) and not isinstance(nargs, bool) and nargs >= 0)):
        check.fail(where, f"nargs must be null, an int, '?', '*' or '+', not {nargs!r}")
    if flag["choices"] is not None:
        check.typed(where + ".choices", flag["choices"], list, "a list or null")


def _when(check, where, when):
    if not check.typed(where, when, list, "a list of conditions"):
        return
    for i, entry in enumerate(when):
        if isinstance(entry, dict) and "loop" in entry:
            check.keys(f"{where}[{i}]", entry, ["loop"])
        elif check.keys(f"{where}[{i}]", entry, ["test", "holds"]):
            check.typed(f"{where}[{i}].holds", entry["holds"], bool, "true or false")


def _launcher(check, where, launcher, scripts, launchers):
    keys = ["runs", "args", "env", "settings", "conditional_env", "conditional_settings"]
    if not check.keys(where, launcher, keys):
        return
    if launcher["runs"] not in scripts and launcher["runs"] not in launchers:
        check.fail(where, f"runs {launcher['runs']!r}, which is neither a recorded script nor launcher")
    if check.typed(where + ".args", launcher["args"], list, "a list"):
        for i, arg in enumerate(launcher["args"]):
            if check.keys(f"{where}.args[{i}]", arg, ["flag", "value"], ["conditional", "when", "unknown_to_script"]):
                if arg["flag"] is not None and not isinstance(arg["flag"], str):
                    check.fail(f"{where}.args[{i}]", "flag must be a string or null")
                if arg.get("conditional") is not None and "when" not in arg:
                    check.fail(f"{where}.args[{i}]", "a conditional argument says when")
                if "when" in arg:
                    _when(check, f"{where}.args[{i}].when", arg["when"])
    for kind in ("env", "settings"):
        if check.typed(f"{where}.{kind}", launcher[kind], dict, "an object"):
            for name, value in launcher[kind].items():
                check.typed(f"{where}.{kind}[{name}]", value, str, "a string as written")
        if check.typed(f"{where}.conditional_{kind}", launcher["conditional_" + kind], list, "a list"):
            for i, entry in enumerate(launcher["conditional_" + kind]):
                if check.keys(f"{where}.conditional_{kind}[{i}]", entry, ["name", "value", "when"]):
                    _when(check, f"{where}.conditional_{kind}[{i}].when", entry["when"])


def _log_format(check, where, fmt):
    if not check.keys(where, fmt, ["function", "pieces"], ["call"]):
        return
    if "call" in fmt:
        _log_call(check, where + ".call", fmt["call"])
    check.typed(where + ".function", fmt["function"], str, "a string")
    if not check.typed(where + ".pieces", fmt["pieces"], list, "a list"):
        return
    if not fmt["pieces"]:
        check.fail(where, "no pieces")
    for i, piece in enumerate(fmt["pieces"]):
        if not isinstance(piece, str):
            check.keys(f"{where}.pieces[{i}]", piece, ["field"], ["spec", "conversion"])


def _log_call(check, where, call):
    if not check.keys(where, call, ["path", "function", "arguments", "when", "counted"]):
        return
    for key in ("path", "function"):
        check.typed(f"{where}.{key}", call[key], str, "a string")
    if check.typed(where + ".arguments", call["arguments"], dict, "an object"):
        for name, expr in call["arguments"].items():
            check.typed(f"{where}.arguments[{name}]", expr, str, "an expression as written")
    if check.typed(where + ".when", call["when"], list, "a list"):
        for i, test in enumerate(call["when"]):
            check.typed(f"{where}.when[{i}]", test, str, "a test as written")
    if check.typed(where + ".counted", call["counted"], dict, "an object"):
        for name, moment in call["counted"].items():
            if moment not in ("before", "after"):
                check.fail(f"{where}.counted[{name}]", "'before' or 'after' expected")
            elif name not in call["arguments"].values() if isinstance(call["arguments"], dict) else True:
                check.fail(f"{where}.counted[{name}]", "not one of the call's arguments")


NCCOM_KINDS = {"switch", "choice", "optional_choice", "size", "hosts", "stats", "int", "path", "str"}


def _nccom_tool(check, tool, pages):
    keys = ["name", "usage", "usage_source", "operations", "flags", "size_units", "environment", "multi_node",
            "output", "bus_bandwidth"]
    if not check.keys("tool", tool, keys):
        return
    if check.typed("tool.operations", tool["operations"], list, "a list") and not tool["operations"]:
        check.fail("tool.operations", "no operation recorded")
    if check.typed("tool.flags", tool["flags"], list, "a list"):
        for i, flag in enumerate(tool["flags"]):
            where = f"tool.flags[{i}]"
            if check.keys(where, flag, ["names", "group", "default", "required", "source", "kind", "kind_inferred"],
                          ["choices", "nargs"]):
                if flag["kind"] not in NCCOM_KINDS:
                    check.fail(where, f"unknown kind {flag['kind']!r}")
                if not flag["names"] or not all(isinstance(n, str) and n.startswith("-") for n in flag["names"]):
                    check.fail(where, "names must be options starting with '-'")
    if check.typed("tool.output", tool["output"], dict, "an object"):
        for key in ("header", "average_line", "failed_size_row", "failure_summary"):
            if key not in tool["output"]:
                check.fail("tool.output", f"missing {key!r}")
    if check.typed("tool.multi_node", tool["multi_node"], dict, "an object"):
        for key in ("mpi", "slurm"):
            if key not in tool["multi_node"]:
                check.fail("tool.multi_node", f"missing {key!r}")
    _sources(check, "tool", tool, pages)


SOURCE = re.compile(r"^[^:\s]+\.(rst|md|txt|py):[0-9]+$")


def _sources(check, where, obj, pages):
    """Every "source" value in a tool record names a recorded page and a line."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key.endswith("source"):
                for src in value if isinstance(value, list) else [value]:
                    if not (isinstance(src, str) and SOURCE.match(src) and src.split(":")[0] in pages):
                        check.fail(f"{where}.{key}", f"{src!r} is not a recorded page:line")
            else:
                _sources(check, f"{where}.{key}", value, pages)
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            _sources(check, f"{where}[{i}]", value, pages)


def _tool(check, record):
    pages = record["pages"]
    if not (isinstance(pages, list) and pages and all(isinstance(p, str) for p in pages)):
        check.fail("pages", "a non-empty list of page paths expected")
        return
    tool = record["tool"]
    if isinstance(tool, dict) and tool.get("name") == "nccom-test":
        _nccom_tool(check, tool, pages)
        return
    keys = ["name", "usage_examples", "options", "environment", "cache", "log_lines", "rules"]
    if not check.keys("tool", tool, keys):
        return
    if check.typed("tool.options", tool["options"], list, "a list"):
        for i, option in enumerate(tool["options"]):
            if check.typed(f"tool.options[{i}]", option, dict, "an object") and not option.get("names"):
                check.fail(f"tool.options[{i}]", "missing 'names'")
    if check.keys("tool.environment", tool["environment"], ["sets_for_command", "reads"]):
        for kind in ("sets_for_command", "reads"):
            for i, entry in enumerate(tool["environment"][kind]):
                if not (isinstance(entry, dict) and isinstance(entry.get("name"), str)):
                    check.fail(f"tool.environment.{kind}[{i}]", "an entry with a name expected")
    cache = tool["cache"]
    if check.typed("tool.cache", cache, dict, "an object"):
        for key in ("default_location", "location_precedence", "entry_directory", "entry_files", "failed_compile"):
            if key not in cache:
                check.fail("tool.cache", f"missing {key!r}")
    _sources(check, "tool", tool, pages)


TITAN_FIELD_TYPES = SIMPLE_TYPES | {"list[str]"}


def _torchtitan(check, record):
    """The TorchTitan facts beside the scripts: every config field is a flag of the entry point."""
    titan = record["torchtitan"]
    keys = ["config_selection", "cli", "fields", "narrowed_by_registries", "varies_by_config", "launcher", "log",
            "checkpoint", "not_seen"]
    if not check.keys("torchtitan", titan, keys):
        return
    entry = record["scripts"].get("torchtitan/train.py") if isinstance(record["scripts"], dict) else None
    if not isinstance(entry, dict):
        check.fail("torchtitan", "the entry point torchtitan/train.py is not among the scripts")
        return
    dests = {f.get("dest") for f in entry.get("flags", []) if isinstance(f, dict)}
    if check.typed("torchtitan.fields", titan["fields"], list, "a list"):
        for i, field in enumerate(titan["fields"]):
            where = f"torchtitan.fields[{i}]"
            if not check.keys(where, field, ["name", "type", "choices", "optional", "default", "declared"]):
                continue
            if field["type"] not in TITAN_FIELD_TYPES and not str(field["type"]).startswith("other:"):
                check.fail(where, f"unknown type {field['type']!r}")
            if field["name"] not in dests:
                check.fail(where, f"{field['name']} has no flag in scripts[torchtitan/train.py]")
    for key in ("strict", "unknown_flag_exit", "bool_forms", "list_separator"):
        if isinstance(titan["cli"], dict) and key not in titan["cli"]:
            check.fail("torchtitan.cli", f"missing {key!r}")
    if isinstance(titan["log"], dict) and titan["log"].get("step_key") not in record["log_formats"]:
        check.fail("torchtitan.log.step_key", "not a recorded log format")
    if not (isinstance(titan["not_seen"], list) and titan["not_seen"]):
        check.fail("torchtitan.not_seen", "a non-empty list expected: the fork's source is not read")
