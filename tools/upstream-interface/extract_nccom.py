#!/usr/bin/env python3
"""Writes the record of nccom-test's interface (docs/upstream.md) from the Neuron documentation
sources (aws-neuron/aws-neuron-sdk) at one revision: the tool ships in the Neuron SDK's tools
package and its source is not public, so the record holds what its user guide states. Each fact
carries the page's path and line; what the page only implies (a flag's type, read off its
description and examples: the argument tables have no type column) is marked inferred. Refuses
(exit 2, nothing written) when an anchor is missing: the page changed and the facts must be
looked at again.

  extract_nccom.py --repo DIR --rev REV --release NAME --out FILE [--check]"""

import re
import sys


from extract_npc import Page  # noqa: E402
from gitsrc import ExtractError  # noqa: E402
from record_io import docs_main  # noqa: E402

EXTRACTED_BY = "tools/upstream-interface/extract_nccom.py"
REPOSITORY = "https://github.com/aws-neuron/aws-neuron-sdk"
GUIDE = "tools/neuron-sys-tools/nccom-test.rst"
HEADING = re.compile(r"^([A-Z][^\n]*?):?\n(~+|\^+)\n", re.M)
# A row of an argument table: its names, its default value, its description (and the
# description's continuation lines, indented further).
ROW = re.compile(r"^\s*\* - ``(-[^`]+)``\n\s*- ([^\n]*)\n\s*- ([^\n]*\n(?:\s{8,}[^\n]*\n)*)", re.M)


def heading_before(page, pos):
    found = [m for m in HEADING.finditer(page.text, 0, pos)]
    if not found:
        raise ExtractError(f"{page.path}: no section heading before line {page.source(pos)}")
    return found[-1].group(1).strip()


def operations(page):
    start = page.find(r"^\s*\* - <cc operation>\n", "the <cc operation> argument")
    end = page.find(r"^\s*\* - ``-r, --nworkers``", "the -r argument", start.end())
    body = page.text[start.end():end.start()]
    out = []
    for m in re.finditer(r"^\s*- ``([a-z_]+)``(?: / ``([a-z_]+)``)?: ([^\n(]+?)\s*(?:\(([^)\n]*)\))?$", body, re.M):
        pos = start.end() + m.start()
        out.append({"names": [n for n in m.group(1, 2) if n], "operation": m.group(3),
                    "limits": m.group(4), "source": page.source(pos)})
    if not out:
        raise ExtractError(f"{page.path}: no collective operation listed: the page changed")
    return out


def size_units(page):
    note = page.find(r"All arguments that take a size in bytes will also accept larger size units, for example:\s*"
                     r"``(-\w) (\d+)`` can be written as ``-\w (\w+)`` or ``-\w (\d+)`` can be written as ``-\w (\w+)``",
                     "the size units note")
    return {"flags": [note.group(1)], "examples": [[note.group(2), note.group(3)], [note.group(4), note.group(5)]],
            "source": page.source(note.start())}


def kind_of(names, default, description, sized):
    """The value a flag takes, read off its default, its description and the size note (inferred)."""
    words = " ".join(description.split())
    if default == "false":
        return {"kind": "switch"}
    if set(names) & sized:
        return {"kind": "size"}
    if names[-1] == "--datatype":
        return {"kind": "choice", "choices": re.findall(r"``(\w+)``", words.split("Supported types:")[1].split(".")[0])}
    if names[-1] == "--check":
        return {"kind": "optional_choice", "choices": re.findall(r"``(\w+)``", words.split("options:")[1].split(".")[0])}
    if re.search(r"[Ss]ize for the benchmark|Amount of bytes", words):
        return {"kind": "size"}
    if re.search(r"^Hosts on which", words):
        return {"kind": "hosts", "nargs": "+"}
    if names[-1] == "--stats":
        return {"kind": "stats", "nargs": "+"}
    if re.fullmatch(r"\d+", default) or re.search(r"^(Total )?[Nn]umber of|^Seed|^Specify jobId|^Run the given", words):
        return {"kind": "int"}
    if re.search(r"[Ff]ile|[Ss]cript|directory|filepath", words):
        return {"kind": "path"}
    return {"kind": "str"}


def flags(page):
    out = []
    note = size_units(page)
    sized = set(note["flags"])
    for m in ROW.finditer(page.text):
        names = [n.strip() for n in m.group(1).split(",")]
        default = m.group(2).strip().strip("`")
        description = m.group(3)
        flag = {"names": names, "group": heading_before(page, m.start()),
                "default": None if default in ("N/A", "N/A, required argument") else default,
                "required": default == "N/A, required argument", "source": page.source(m.start())}
        flag.update(kind_of(names, default, description, sized))
        flag["kind_inferred"] = True
        out.append(flag)
    by_name = {n: f for f in out for n in f["names"]}
    for needed in ("--nworkers", "--nnodes", "--minbytes", "--maxbytes", "--iters", "--warmup_iters", "--datatype",
                   "--hosts", "--slurm-mode", "--slurm-job-id"):
        if needed not in by_name:
            raise ExtractError(f"{page.path}: the {needed} argument not found: the page changed")
    return out


def multi_node(page):
    more = page.find(r"If this argument is greater than 1, `MPI Execution`_ or `Slurm Execution`_ will need to be used",
                     "what -N > 1 needs")
    hosts = page.find(r"provide all hosts for your invocation, either with the ``--hosts`` flag or a ``(~/hosts)`` file, "
                      r"and set the ``(NEURON_RT_ROOT_COMM_ID)`` environment variable to the IP address of the first host "
                      r"listed and any free port", "how mpi mode is set up")
    ssh = page.find(r"``mpi`` may require passwordless SSH access to each host", "mpi and ssh")
    starts = page.find(r"will invoke a ``(neuron-bench)`` process on both hosts listed", "who starts the workers")
    split = page.find(r"The number of workers will be divided equally across all nodes", "how ranks are split")
    collected = page.find(r"Latency data will be reported back from each host and collected on the host on which the "
                          r"``nccom-test`` command was invoked", "where results are collected")
    where = page.find(r"should usually be one of the provided hosts, but it can be another unrelated host",
                      "where nccom-test runs")
    slurm = page.find(r"specify the ``--slurm-mode`` flag\. When using slurm mode, ``nccom-test`` invocations should be "
                      r"run from the head node", "slurm mode")
    srun = page.find(r"Use ``(srun)`` to run benchmark", "slurm mode's launcher")
    existing = page.find(r"use an existing slurm allocation \(``jobId: \d+``\)", "an existing allocation")
    inf2 = page.find(r"On Inf2 instances, only single-instance benchmarking is supported", "multi-node limits")
    example = page.find(r"^``(NEURON_RT_ROOT_COMM_ID=\S+ nccom-test -r 64 -N 2 -d fp32 allr --hosts [^`\n]+)``",
                        "the mpi example command")
    return {
        "nnodes_above_1_needs": ["mpi", "slurm"],
        "nnodes_above_1_needs_source": page.source(more.start()),
        "workers_divided_equally_across_nodes": True,
        "workers_divided_equally_across_nodes_source": page.source(split.start()),
        "single_node_only": ["inf2"],
        "single_node_only_source": page.source(inf2.start()),
        "mpi": {
            "hosts_from": ["--hosts", "--hosts-file", hosts.group(1)],
            "hosts_from_source": page.source(hosts.start()),
            "environment": {"name": hosts.group(2), "value": "<IP address of the first host listed>:<any free port>"},
            "environment_source": page.source(hosts.start()),
            "invoked_on": "one host; usually one of --hosts, or another host that can start MPI processes on them",
            "invoked_on_source": page.source(where.start()),
            "starts_workers": f"nccom-test itself: one {starts.group(1)} process on every host, through MPI",
            "starts_workers_source": page.source(starts.start()),
            "may_need_passwordless_ssh": True,
            "may_need_passwordless_ssh_source": page.source(ssh.start()),
            "results_collected_on": "the host nccom-test was invoked on",
            "results_collected_on_source": page.source(collected.start()),
            "example": example.group(1),
            "example_source": page.source(example.start(1)),
        },
        "slurm": {
            "switch": "--slurm-mode",
            "launcher": srun.group(1),
            "launcher_source": page.source(srun.start()),
            "invoked_on": "the head node of the Slurm cluster",
            "invoked_on_source": page.source(slurm.start()),
            "existing_allocation": "--slurm-job-id <job id>; without it nccom-test makes a new allocation",
            "existing_allocation_source": page.source(existing.start()),
        },
    }


def output(page):
    header = page.find(r"^\s*(size\(B\)\s+count\(elems\)\s+type\s+time\(us\)\s+algbw\(GB/s\)\s+busbw\(GB/s\))\s*$",
                       "the result table's header")
    columns = page.all(r"^\s*\* - ((?:size|count|type|time|algbw|busbw|algorithm)[^\n]*?)\s*$", "the column list")
    gib = page.find(r"gibibytes \(1GiB = ([0-9,]+) bytes\) per second", "the unit of the bandwidth columns")
    average = page.find(r"^\s*(Avg bus bandwidth):\s+([0-9.]+)(GB/s)\s*$", "the average line")
    stats = page.find(r"^\s*size\(B\)\s+count\(elems\)\s+type\s+(time:avg\(us\))\s+time:p25", "the --stats columns")
    fail_row = page.find(r"^\s*(\d+)\s+(Failure running neuron-bench - log file )(\S+)\s*$", "the failed-size row")
    fail_end = page.find(r"^\s*\d+( errors found - test failed)\s*$", "the failure summary line")
    early = page.find(r"^\s*(Neuron DKMS Driver is not running!)", "the immediate failure example")
    return {
        "header": header.group(1).split(),
        "header_source": page.source(header.start(1)),
        "columns": [c.group(1) for c in columns],
        "columns_source": page.source(columns[0].start()),
        "time_column_with_stats": stats.group(1),
        "time_column_with_stats_source": page.source(stats.start()),
        "row": "one line per size, the columns in header order, right-aligned",
        "row_source": page.source(header.start(1)),
        "bandwidth_unit_bytes": int(gib.group(1).replace(",", "")),
        "bandwidth_unit_source": page.source(gib.start()),
        "average_line": {"label": average.group(1), "unit": average.group(3),
                         "separator": "':' then spaces or a tab", "example": average.group(2)},
        "average_line_source": page.source(average.start(1)),
        "failed_size_row": {"size": "<size(B)>", "text": fail_row.group(2) + "<log file>"},
        "failed_size_row_source": page.source(fail_row.start()),
        "failure_summary": "<n>" + fail_end.group(1),
        "failure_summary_source": page.source(fail_end.start()),
        "immediate_failure_example": early.group(1),
        "immediate_failure_example_source": page.source(early.start(1)),
    }


def bus_bandwidth(page):
    table = page.find(r"\* - Collective Operation\n\s+- Bus Bandwidth Factor\n((?:\s+\* - [^\n]+\n\s+- [^\n]+\n)+)",
                      "the bus bandwidth factors")
    factors = [{"operation": m.group(1), "factor": m.group(2)}
               for m in re.finditer(r"\* - ([^\n]+?)\s*\n\s+- (?:``)?([^`\n]+?)(?:``)?\s*$", table.group(1), re.M)]
    return {"factors": factors, "source": page.source(table.start())}


def environment(page):
    out = []
    start = page.find(r"^\s*\* - Environment Variable\n", "the environment variable table")
    for m in re.finditer(r"^\s*\* - ``([A-Z_]+)``\n\s*- ([^\n]+)\n", page.text[start.end():], re.M):
        out.append({"name": m.group(1), "default": m.group(2).strip(), "source": page.source(start.end() + m.start())})
    return out


def build(src, release):
    page = Page(src, GUIDE)
    tool = {
        "name": "nccom-test",
        "usage": "nccom-test [options] <cc operation>",
        "usage_source": page.source(page.find(r"nccom-test -r 2 allr", "the first example").start()),
        "operations": operations(page),
        "flags": flags(page),
        "size_units": size_units(page),
        "environment": environment(page),
        "multi_node": multi_node(page),
        "output": output(page),
        "bus_bandwidth": bus_bandwidth(page),
    }
    return {
        "format": 1,
        "package": "nccom-test",
        "repository": REPOSITORY,
        "release": release,
        "commit": src.commit,
        "extracted_by": EXTRACTED_BY,
        "pages": [GUIDE],
        "tool": tool,
    }


def main(argv):
    return docs_main("extract_nccom.py", "nccom-test", build, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
