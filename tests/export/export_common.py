"""What the export tests share: the built trnslurm, the stages in chain order, the instance table."""

import json
import os
import subprocess

BIN = os.environ["TRNSLURM_BIN"]
SOURCE = os.environ["TRNSLURM_SOURCE_DIR"]
STAGE_ORDER = ["convert", "precompile", "train", "convert_back"]


def trnslurm(*args, cwd):
    return subprocess.run([BIN, *args], cwd=cwd, capture_output=True, text=True)


def instance_figures(name):
    out = subprocess.run([BIN, "instances", "--json"], capture_output=True, text=True, check=True)
    for t in json.loads(out.stdout)["instances"]:
        if t["name"] == name:
            return {k: v["value"] for k, v in t["figures"].items()}
    raise AssertionError(f"no instance {name}")
