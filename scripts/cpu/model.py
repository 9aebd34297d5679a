"""The tiny Llama of the old entry points (train.py, make_demo_data.py, the tests): now in
lib/llama.py, shared with the upstream stand-ins. Kept until the lead removes the old scripts."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))

from llama import Config, TinyLlama  # noqa: E402,F401
