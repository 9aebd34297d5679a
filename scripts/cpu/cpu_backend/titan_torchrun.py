"""torchrun as the TorchTitan venv provides it (torch 2.14 there), here Debian's torch 1.13 with
torchrun_fix.py, the stand-in checkout on PYTHONPATH (pip install -e, the venv's python3), and the
options of newer torchrun that 1.13 lacks or prints differently: --local-ranks-filter L (the local
ranks whose output is shown) and --role R with --tee (every line of a worker prefixed
[R<global rank>]:), both handed to the workers in the environment (TRNSLURM_STANDIN_LOG_RANKS,
TRNSLURM_STANDIN_RANK_PREFIX), where the stand-in's logger applies them."""

import os
import sys

from . import torchrun_fix

TAKEN = {"--local-ranks-filter": "ranks", "--local_ranks_filter": "ranks", "--role": "role", "--tee": "tee"}


def split(argv):
    """torchrun's own options (the words before `-m`, or before the script) with the taken ones
    removed, and their values."""
    end = argv.index("-m") if "-m" in argv else next((i for i, w in enumerate(argv) if w.endswith(".py")), len(argv))
    kept, values, i = [], {}, 0
    while i < end:
        name, eq, inline = argv[i].partition("=")
        if name in TAKEN:
            values[TAKEN[name]] = inline if eq else (argv[i + 1] if i + 1 < end else "")
            i += 1 if eq else 2
            continue
        kept.append(argv[i])
        i += 1
    return kept + argv[end:], values


if __name__ == "__main__":
    args, taken = split(sys.argv[1:])
    if "ranks" in taken:
        os.environ["TRNSLURM_STANDIN_LOG_RANKS"] = taken["ranks"]
    if "tee" in taken:
        os.environ["TRNSLURM_STANDIN_RANK_PREFIX"] = taken.get("role", "default")
    sys.argv = [sys.argv[0]] + args
    torchrun_fix.main()
