#!/usr/bin/env python3
"""Writes the record of neuron_parallel_compile's interface (docs/upstream.md) from the Neuron
documentation sources (aws-neuron/aws-neuron-sdk) at one revision. The tool's own source is not
public, so the record holds what the documentation pages state: each fact is found by an anchor
in a page and carries that page's path and line; a fact the pages only imply is marked inferred.
Refuses (exit 2, nothing written) when an anchor is missing: the page changed and the facts must
be looked at again.

  extract_npc.py --repo DIR --rev REV --release NAME --out FILE [--check]"""

import re
import sys


from gitsrc import ExtractError  # noqa: E402
from record_io import docs_main  # noqa: E402

EXTRACTED_BY = "tools/upstream-interface/extract_npc.py"
REPOSITORY = "https://github.com/aws-neuron/aws-neuron-sdk"
TRAINING = "frameworks/torch/torch-neuronx/api-reference-guide/training"
NPC = f"{TRAINING}/pytorch-neuron-parallel-compile.rst"
ENVVARS = f"{TRAINING}/torch-neuron-envvars.rst"
CACHING = "about-neuron/arch/neuron-features/neuron-caching.rst"
HFTRAINER = "frameworks/torch/torch-neuronx/tutorials/training/finetune_hftrainer.rst"
PROFILING = "archive/tutorials/multinode-training-model-profiling.rst"
CACHE_PATH = re.compile(r"(/var/tmp/neuron-compile-cache)/(neuronxcc-[^/\s]+)/(MODULE_[0-9]+\+[0-9a-f]+)/"
                        r"(model\.(?:hlo\.pb|hlo_module\.pb|neff))")


class Page:
    def __init__(self, src, path):
        self.path = path
        self.text = src.read(path)

    def source(self, pos):
        return f"{self.path}:{self.text.count(chr(10), 0, pos) + 1}"

    def find(self, pattern, what, start=0):
        m = re.compile(pattern, re.S | re.M).search(self.text, start)
        if m is None:
            raise ExtractError(f"{self.path}: {what} not found: the page changed, look at the facts again")
        return m

    def all(self, pattern, what):
        found = list(re.finditer(pattern, self.text, re.M))
        if not found:
            raise ExtractError(f"{self.path}: {what} not found: the page changed, look at the facts again")
        return found

    def section(self, name):
        """The text of a ``NAME`` definition, up to the next one: (start, end)."""
        m = self.find(rf"^``{name}``[^\n]*\n", f"the {name} entry")
        following = re.compile(r"^``[A-Z_]+``", re.M).search(self.text, m.end())
        return m.start(), following.start() if following else len(self.text)


def unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def command_option(npc):
    values = npc.all(r"neuron_parallel_compile --command ([a-z][a-z-]*)", "--command examples")
    absent = npc.find(r"if ``--command`` is not specified, ``neuron_parallel_compile`` will do both\s+collection"
                      r"\s+and\s+compilation", "what happens without --command")
    return {
        "names": ["--command"],
        "values": unique(m.group(1) for m in values),
        "values_source": [npc.source(m.start()) for m in values],
        "when_absent": "collect, then compile",
        "when_absent_source": npc.source(absent.start()),
    }


def analyze_options(npc):
    out = []
    for m in npc.all(r"^\s*``(--analyze-[a-z]+) (\S+)``", "the analyze options"):
        default = npc.find(r"Default: (\S+)", f"the default of {m.group(1)}", m.end())
        only = npc.find(r"Only supported for (--command analyze)", f"where {m.group(1)} applies", m.end())
        option = {"names": [m.group(1)], "only_with": only.group(1), "default": default.group(1),
                  "source": npc.source(m.start())}
        choices = re.fullmatch(r"\{([^}]*)\}", m.group(2))
        option["values"] = choices.group(1).split(",") if choices else None
        out.append(option)
    return out


def usage_examples(npc):
    lines = npc.all(r"^\s*(?:``)?(neuron_parallel_compile [^`\n]+?)(?:``)?\s*$", "usage examples")
    return [{"command": m.group(1), "source": npc.source(m.start(1))} for m in lines]


def environment(pages):
    npc, envvars, hf = pages[NPC], pages[ENVVARS], pages[HFTRAINER]
    start, end = envvars.section("NEURON_EXTRACT_GRAPHS_ONLY")
    used = envvars.find(r"Used automatically for ahead-of-time\s+graph extraction", "who sets NEURON_EXTRACT_GRAPHS_ONLY", start)
    if used.start() > end:
        raise ExtractError(f"{envvars.path}: NEURON_EXTRACT_GRAPHS_ONLY no longer says neuron_parallel_compile sets it")
    value = hf.find(r'os\.environ\.get\("NEURON_EXTRACT_GRAPHS_ONLY", "0"\) == "(1)"', "the value scripts compare with")
    reads = []
    listed = npc.find(r"environment variables below are available", "the environment variable list")
    for m in re.finditer(r"^``([A-Z_]+)``\s*:", npc.text[listed.end():], re.M):
        pos = listed.end() + m.start()
        entry = {"name": m.group(1), "source": npc.source(pos)}
        following = re.compile(r"^``[A-Z_]+``\s*:|^[A-Z][^\n]*\n~~~", re.M).search(npc.text, pos + len(m.group(0)))
        body = npc.text[pos:following.start() if following else len(npc.text)]
        default = re.search(r"Default is (?:``)?([^`\s]+?)(?:``)?\.", body)
        entry["default"] = default.group(1) if default else None
        reads.append(entry)
    return {
        "sets_for_command": [{
            "name": "NEURON_EXTRACT_GRAPHS_ONLY", "source": envvars.source(used.start()),
            "value": value.group(1), "value_source": hf.source(value.start()), "value_inferred": True}],
        "reads": reads,
    }


def cache(pages):
    npc, caching, profiling = pages[NPC], pages[CACHING], pages[PROFILING]
    default = npc.find(r"Default is ``(/[^`]+)``", "the default cache location")
    order = npc.find(r"``--cache_dir`` taking precedence over ``NEURON_COMPILE_CACHE_URL``", "the cache precedence")
    s3 = caching.find(r"If ``<cache_url>`` starts with ``(s3://)``", "the S3 cache prefix")
    same = npc.find(r"same cache URL for both the precompilation command", "the same-cache rule")
    paths = [(m, page) for page in (npc, caching) for m in CACHE_PATH.finditer(page.text)]
    if not paths:
        raise ExtractError(f"{NPC}: no example cache path: the page changed, look at the facts again")
    tree = profiling.find(r"search for the respective module directory.*?code-block:: text\n\n((?:\s+[├└]── \S+\n)+)",
                          "the files of a module directory")
    files = {}
    for m, page in paths:
        files.setdefault(m.group(4), []).append(page.source(m.start(4)))
    for name in re.findall(r"[├└]── (\S+)", tree.group(1)):
        files.setdefault(name, []).append(profiling.source(tree.start(1)))
    key = caching.find(r"The cache uses hash of the Neuron compiler flags and XLA graph as the\s+key", "the cache key")
    failed = npc.find(r"The graph would be marked as failed", "how a failed compile is kept")
    failed_line = npc.find(r"(Got a cached failed neff at )\S+/(model\.neff)\. Will skip compilation", "the failed-compile message")
    retry = npc.find(r"add ``(--retry_failed_compilation)`` in ``NEURON_CC_FLAGS``", "how to retry a failed compile")
    return {
        "default_location": default.group(1),
        "default_location_source": npc.source(default.start()),
        "location_precedence": ["NEURON_CC_FLAGS --cache_dir=<url>", "NEURON_COMPILE_CACHE_URL", "default_location"],
        "location_precedence_source": npc.source(order.start()),
        "s3_prefix": s3.group(1),
        "s3_prefix_source": caching.source(s3.start()),
        "same_location_for_precompile_and_training_source": npc.source(same.start()),
        "entry_key": "a hash of the XLA graph and of the compiler flags",
        "entry_key_source": caching.source(key.start()),
        "entry_directory": "<cache>/neuronxcc-<compiler version>/MODULE_<number>+<hex>/",
        "entry_directory_inferred": True,  # the pattern is read off the example paths
        "entry_directory_examples": sorted({"/".join(m.group(2, 3)) for m, _ in paths}),
        "entry_directory_source": unique(page.source(m.start()) for m, page in paths),
        "entry_files": [{"name": name, "source": unique(sources)} for name, sources in files.items()],
        "failed_compile": {
            "marked_failed_source": npc.source(failed.start()),
            "later_runs_report": failed_line.group(1) + "<entry>/" + failed_line.group(2),
            "later_runs_report_source": npc.source(failed_line.start()),
            "retry_with_cc_flag": retry.group(1),
            "retry_source": npc.source(retry.start()),
            "marker": None,  # the pages do not say how an entry is marked failed
        },
    }


def log_lines(npc):
    lines = npc.all(r"^\s*(?:INFO: [0-9-]+ [0-9:.]+:\s+\d+\s+)?(INFO \|\|[A-Z_]+\|\|: [^\n]+?)\s*$", "log lines")
    keep = ("Compile cache path:", "Extracting graphs", "Current remaining items", "Total graphs:",
            "Total successful compilations:", "Total failed compilations:", "Got a cached failed neff")
    return [{"text": m.group(1), "source": npc.source(m.start(1))} for m in lines
            if any(k in m.group(1) for k in keep)]


def rules(pages):
    npc, envvars = pages[NPC], pages[ENVVARS]
    anchors = [
        (npc, r"Except for the option to limit number of run steps",
         "the precompile run's command must match the training run's except the option limiting its steps; "
         "other differences create new graphs and the training run compiles again"),
        (npc, r"In this mode, no real execution is performed",
         "the trial run executes in graph-extraction mode: its outputs (loss, checkpoints) are not real"),
        (npc, r"perform parallel\s+pre-compilation of the graphs",
         "after the trial run ends, the extracted graphs are compiled in parallel into the cache"),
        (npc, r"a crash in the training script would be ignored",
         "with NEURON_IGNORE_TRAINING_SCRIPT_ERROR_AND_COMPILE=1 a crash of the trial run is ignored and "
         "the graphs collected until then are compiled"),
        (envvars, r"``NEURON_PARALLEL_COMPILE_DUMP_RESULTS``",
         "NEURON_PARALLEL_COMPILE_DUMP_RESULTS=1 adds compile times to the final JSON summary"),
    ]
    out = []
    for page, pattern, fact in anchors:
        m = page.find(pattern, f"the anchor {pattern!r}")
        out.append({"fact": fact, "source": page.source(m.start())})
    return out


def build(src, release):
    pages = {path: Page(src, path) for path in (NPC, ENVVARS, CACHING, HFTRAINER, PROFILING)}
    npc = pages[NPC]
    tool = {
        "name": "neuron_parallel_compile",
        "usage_examples": usage_examples(npc),
        "options": [command_option(npc)] + analyze_options(npc),
        "environment": environment(pages),
        "cache": cache(pages),
        "log_lines": log_lines(npc),
        "rules": rules(pages),
    }
    return {
        "format": 1,
        "package": "neuron_parallel_compile",
        "repository": REPOSITORY,
        "release": release,
        "commit": src.commit,
        "extracted_by": EXTRACTED_BY,
        "pages": sorted(pages),
        "tool": tool,
    }


def main(argv):
    return docs_main("extract_npc.py", "neuron_parallel_compile", build, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
