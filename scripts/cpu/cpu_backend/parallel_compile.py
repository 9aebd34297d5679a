"""CPU stand-in for neuron_parallel_compile (torch-neuronx; Neuron docs "PyTorch NeuronX
neuron_parallel_compile CLI"): runs the given command with NEURON_EXTRACT_GRAPHS_ONLY=1, in
which the stand-in trainers record the graphs they would compile into the compile cache and
train nothing, then "compiles" every extracted graph of the cache (model.neff, model.done; a
failure leaves model.log). --command collect / compile do one phase each; clean empties the
cache, clear-locks removes lock files; analyze is refused (it needs neuronx-cc).
Cache location and layout: neuron_cache.py beside this file. Environment as the real tool:
NEURON_PARALLEL_COMPILE_MAX_RETRIES, NEURON_IGNORE_TRAINING_SCRIPT_ERROR_AND_COMPILE,
NEURON_COMPILE_CACHE_URL, NEURON_CC_FLAGS (--cache_dir, --retry_failed_compilation)."""

import argparse
import json
import os
import subprocess
import sys

from . import neuron_cache

TAG = "INFO ||NEURON_PARALLEL_COMPILE||:"


def build_parser():
    p = argparse.ArgumentParser(prog="neuron_parallel_compile",
                                description="Extract a training command's graphs and compile them into the cache "
                                            "(CPU stand-in).")
    p.add_argument("--command", choices=["collect", "compile", "clean", "clear-locks", "analyze"], default=None,
                   help="one phase only (default: collect, then compile)")
    p.add_argument("--analyze-output", default=None, help="analyze only (refused here)")
    p.add_argument("--analyze-verbosity", type=int, choices=[1, 2], default=2, help="analyze only (refused here)")
    p.add_argument("run", nargs=argparse.REMAINDER, help="the training command")
    return p


def collect(command) -> int:
    if not command:
        print("neuron_parallel_compile: no command to run", file=sys.stderr)
        return 2
    env = dict(os.environ, NEURON_EXTRACT_GRAPHS_ONLY="1")
    print(f"INFO ||NEURON_CACHE||: Compile cache path: {neuron_cache.cache_url()}", flush=True)
    rc = subprocess.call(command, env=env)
    if rc and os.environ.get("NEURON_IGNORE_TRAINING_SCRIPT_ERROR_AND_COMPILE") != "1":
        print(f"neuron_parallel_compile: the command exited with {rc}; nothing compiled "
              "(NEURON_IGNORE_TRAINING_SCRIPT_ERROR_AND_COMPILE=1 compiles what was extracted)", file=sys.stderr)
    return rc


def compile_all() -> int:
    retries = int(os.environ.get("NEURON_PARALLEL_COMPILE_MAX_RETRIES", "0") or 0)
    retry_failed = neuron_cache.has_flag("--retry_failed_compilation")
    entries = neuron_cache.pending()
    todo = [d for d in entries if not (d / "model.done").is_file()]
    print(f"INFO ||NEURON_CACHE||: Current remaining items are {len(todo)}, locked are 0, failed are 0, done are "
          f"{len(entries) - len(todo)}, total is {len(entries)}", flush=True)
    report = {}
    for d in todo:
        attempt, state = 0, neuron_cache.compile_entry(d, retry_failed)
        while state == "failed" and attempt < retries:
            attempt += 1
            state = neuron_cache.compile_entry(d, retry_failed=True)
        report[str(d / "model.hlo_module.pb")] = {"status": state == "done", "retry": attempt}
    failed = sum(1 for r in report.values() if not r["status"])
    summary = {"compilation_summary": {str(k).lower(): v for k, v in
                                       ((True, len(report) - failed), (False, failed)) if v},
               "compilation_report": report}
    print(TAG, json.dumps(summary, indent=4), flush=True)
    print(f"{TAG} Total graphs: {len(report)}")
    print(f"{TAG} Total successful compilations: {len(report) - failed}")
    print(f"{TAG} Total failed compilations: {failed}", flush=True)
    return 1 if failed else 0


def main():
    a = build_parser().parse_args()
    command = a.run[1:] if a.run[:1] == ["--"] else a.run
    try:
        if a.command == "analyze":
            print("neuron_parallel_compile: --command analyze needs neuronx-cc; the CPU stand-in cannot analyze",
                  file=sys.stderr)
            return 2
        if a.command == "clean":
            neuron_cache.clean()
            return 0
        if a.command == "clear-locks":
            print(f"{TAG} removed {neuron_cache.clear_locks()} lock files")
            return 0
        if a.command in (None, "collect"):
            rc = collect(command)
            if rc and os.environ.get("NEURON_IGNORE_TRAINING_SCRIPT_ERROR_AND_COMPILE") != "1":
                return rc
            if a.command == "collect":
                return rc
        return compile_all()
    except neuron_cache.CacheError as e:
        print(f"neuron_parallel_compile: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
