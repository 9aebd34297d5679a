"""What every upstream stand-in shares: parsing its arguments with upstream's strictness,
refusing what the CPU backend cannot honour (never silently), and the stand-in-only controls,
which are environment variables so that the flags stay exactly upstream's:

  TRNSLURM_STANDIN_STRICT=1        a flag a parse_known_args script would ignore is an error (exit 2)
  TRNSLURM_STANDIN_LOG=<path>      JSON-lines events: the trainers' (start, step, checkpoint, ...)
                                   and the converter's (start, end)
  TRNSLURM_STANDIN_STEP_DELAY=<s>  the trainers sleep this long after each optimizer step
  TRNSLURM_STANDIN_HW_BACKEND=trn2 the trainers' qkv_linear head order (default trn1; the
                                   converter takes --hw_backend)
  TRNSLURM_STANDIN_COMPILE_FAIL=1  neuron_parallel_compile's compilations all fail (model.log, exit 1)"""

import json
import os
import sys
import time

EXIT_USAGE = 2


def parse(parser, script: str, known: bool, argv=None):
    """parse_args (known False) or parse_known_args (known True) as upstream does; ignored flags
    are named on stderr, and are an error under TRNSLURM_STANDIN_STRICT=1."""
    if not known:
        return parser.parse_args(argv)
    args, ignored = parser.parse_known_args(argv)
    if ignored:
        strict = os.environ.get("TRNSLURM_STANDIN_STRICT") == "1"
        print(f"{script}: upstream parses with parse_known_args and ignores: {' '.join(ignored)}"
              + (" (an error under TRNSLURM_STANDIN_STRICT=1)" if strict else ""), file=sys.stderr)
        if strict:
            sys.exit(EXIT_USAGE)
    return args


def refuse(script: str, what: str, code: int = EXIT_USAGE):
    """An input the stand-in cannot honour: a clear message and a non-zero exit, before any output."""
    print(f"{script} (CPU stand-in): {what}", file=sys.stderr)
    sys.exit(code)


def env_float(name: str, default: float = 0.0) -> float:
    value = os.environ.get(name, "")
    try:
        return float(value) if value else default
    except ValueError:
        refuse(name, f"{name}={value!r} is not a number")


class Events:
    """TRNSLURM_STANDIN_LOG: JSON lines, appended (a requeued job adds to its first run's)."""

    def __init__(self, enabled: bool = True):
        path = os.environ.get("TRNSLURM_STANDIN_LOG", "")
        self.file = open(path, "a", buffering=1) if enabled and path else None  # noqa: SIM115

    def __call__(self, event: str, **fields):
        if self.file:
            self.file.write(json.dumps({"event": event, "time": round(time.time(), 3), **fields}) + "\n")
