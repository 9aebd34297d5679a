#!/usr/bin/python3
"""torchrun with the fix for Debian's torch 1.13 on Python 3.11 (lib/torchrun_fix.py), the same
arguments as torchrun. neuron-venv/bin/torchrun is the same program under its upstream name."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))

import torchrun_fix  # noqa: E402

if __name__ == "__main__":
    torchrun_fix.main()
