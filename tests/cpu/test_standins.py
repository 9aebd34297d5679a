"""The CPU stand-ins of the upstream scripts (scripts/cpu/neuronx-distributed, neuron-venv):
their argument parsers against the interface record, the Hugging Face dataset reader and writer
(cross-checked with `trnslurm plan`), the checkpoint converter, the trainers run with torchrun on
localhost, and neuron_parallel_compile. Run by CTest as cpu.standins (label cpu), with
TRNSLURM_BIN and TRNSLURM_SOURCE_DIR set."""

import argparse
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import torch

SOURCE = Path(os.environ.get("TRNSLURM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CPU = SOURCE / "scripts" / "cpu"
LLAMA = CPU / "neuronx-distributed" / "examples" / "training" / "llama"
VENV = CPU / "neuron-venv" / "bin"
RECORD = SOURCE / "interfaces" / "neuronx-distributed-2.29.json"
PY = "/usr/bin/python3"
sys.path.insert(0, str(CPU / "lib"))

import arrow_ipc  # noqa: E402
import hf_dataset  # noqa: E402
import nxd_checkpoint  # noqa: E402

SCRIPTS = {
    "examples/training/llama/tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py":
        LLAMA / "tp_zero1_llama_hf_pretrain" / "tp_zero1_llama_hf_pretrain.py",
    "examples/training/llama/tp_pp_llama_hf_pretrain/run_llama_nxd.py":
        LLAMA / "tp_pp_llama_hf_pretrain" / "run_llama_nxd.py",
    "examples/training/llama/convert_checkpoints.py": LLAMA / "convert_checkpoints.py",
}


def load_script(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(args, env=None, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, OMP_NUM_THREADS="1", **(env or {})), **kw)


def make_inputs(work: Path, tokens=3000, seq_len=16, shards=2):
    r = run([PY, CPU / "make_nxd_inputs.py", "--dataset", work / "data", "--model_config", work / "cfg",
             "--pretrained", work / "pre" / "model.pt", "--tokens", tokens, "--seq-len", seq_len,
             "--shards", shards])
    assert r.returncode == 0, r.stderr


ACTIONS = {argparse._StoreAction: "store", argparse._StoreTrueAction: "store_true",
           argparse._StoreFalseAction: "store_false", argparse._StoreConstAction: "store_const",
           argparse._AppendAction: "append", argparse._CountAction: "count"}


def describe(action):
    """A parser option in the record's terms."""
    t = action.type
    return {"names": list(action.option_strings), "dest": action.dest, "action": ACTIONS.get(type(action), "other"),
            "type": None if t is None else t.__name__ if t in (int, float, str, bool) else f"other:{t!r}",
            "required": action.required, "default": action.default, "nargs": action.nargs,
            "choices": None if action.choices is None else list(action.choices)}


class ParserRecordTest(unittest.TestCase):
    """Each stand-in's argparse equals upstream's, as the interface record states it."""

    def test_parsers_equal_the_record(self):
        if not RECORD.is_file():
            self.skipTest(f"{RECORD} is not there yet (written by tools/upstream-interface/extract.py)")
        record = json.loads(RECORD.read_text())
        self.assertEqual(record["commit"][:7], "fbac349")
        for rel, path in SCRIPTS.items():
            with self.subTest(script=rel):
                entry = record["scripts"][rel]
                module = load_script(path)
                self.assertEqual(entry["parse"], "known" if module.PARSE_KNOWN else "strict")
                mine = {a.dest: describe(a) for a in module.build_parser()._actions
                        if not isinstance(a, argparse._HelpAction)}
                theirs = {f["dest"]: f for f in entry["flags"]}
                self.assertEqual(sorted(mine), sorted(theirs))
                for dest, flag in theirs.items():
                    for key in ("names", "action", "type", "required", "nargs", "choices"):
                        self.assertEqual(mine[dest][key], flag.get(key), f"{rel} {dest} {key}")
                    if not isinstance(flag.get("default"), dict):  # {"expr": ...}: not a literal
                        self.assertEqual(mine[dest]["default"], flag.get("default"), f"{rel} {dest} default")


class DatasetTest(unittest.TestCase):
    def test_round_trip_and_plan_count(self):
        with tempfile.TemporaryDirectory() as d:
            rows = [{"input_ids": list(range(i, i + 8)), "attention_mask": [1] * 8, "labels": list(range(i, i + 8))}
                    for i in range(1234)]
            hf_dataset.save_to_disk(Path(d) / "ds", rows, num_shards=3, batch_rows=100)
            data = hf_dataset.HFDataset(Path(d) / "ds")
            self.assertEqual(len(data), 1234)
            self.assertEqual(data[777]["input_ids"].tolist(), rows[777]["input_ids"])
            self.assertEqual(data[0]["labels"].dtype, torch.int64)
            self.assertEqual([c for c, _ in data.schema], ["input_ids", "attention_mask", "labels"])
            bin_ = os.environ.get("TRNSLURM_BIN")
            if not bin_:
                self.skipTest("TRNSLURM_BIN not set: the count cross-check needs the built trnslurm")
            recipe = Path(d) / "r.toml"
            recipe.write_text((SOURCE / "recipes" / "tiny-cpu.toml").read_text())
            plan = run([bin_, "plan", "-r", recipe, "--dataset", Path(d) / "ds", "--set", "dataset.format=hf",
                        "--set", "model.seq_len=8", "--json", "--verify"])
            self.assertEqual(plan.returncode, 0, plan.stderr)
            self.assertEqual(json.loads(plan.stdout)["samples"], len(data))

            # A shard cut short: both readers refuse it and say where.
            shard = Path(d) / "ds" / "data-00001-of-00003.arrow"
            shard.write_bytes(shard.read_bytes()[:-300])
            with self.assertRaises(arrow_ipc.ArrowError) as e:
                hf_dataset.HFDataset(Path(d) / "ds")
            self.assertIn(f"{shard}:offset ", str(e.exception))
            plan = run([bin_, "plan", "-r", recipe, "--dataset", Path(d) / "ds", "--set", "dataset.format=hf"])
            self.assertEqual(plan.returncode, 2)
            self.assertIn("data-00001-of-00003.arrow:offset", plan.stderr)

    def test_reads_what_apache_arrow_writes(self):
        # The committed fixtures are written by Apache Arrow JS (tools/dataset-fixtures), with text,
        # struct and dictionary columns around the tokens: the reader skips those and counts alike.
        fixtures = SOURCE / "tests" / "fixtures" / "datasets"
        expected = json.loads((fixtures / "expected.json").read_text())
        for name in ("hf_list", "hf_fixed", "hf_ragged", "hf_legacy", "hf_nested"):
            with self.subTest(name=name):
                data = hf_dataset.HFDataset(fixtures / name)
                self.assertEqual(len(data), expected[name]["rows"])
                self.assertEqual(len(data.columns["input_ids"][0]), expected[name]["tokens"])
        with self.assertRaises(hf_dataset.DatasetError):
            hf_dataset.HFDataset(fixtures / "hf_ragged").require(["input_ids"], seq_len=8)
        with self.assertRaises(hf_dataset.DatasetError):
            hf_dataset.HFDataset(fixtures / "hf_dict")


class ConverterTest(unittest.TestCase):
    def convert(self, *args):
        return run([PY, LLAMA / "convert_checkpoints.py", *args])

    def test_full_sharded_full_round_trip(self):
        with tempfile.TemporaryDirectory() as d:
            work = Path(d)
            make_inputs(work)
            full = torch.load(work / "pre" / "model.pt")
            for tp, pp, extra in ((2, 1, []), (1, 2, []), (2, 2, ["--save_xser", "1"]),
                                  (2, 1, ["--qkv_linear", "1", "--fuse_qkv", "1"])):
                with self.subTest(tp=tp, pp=pp, extra=extra):
                    out = work / f"ck{tp}{pp}{len(extra)}"
                    common = ["--hw_backend", "trn1", "--config", work / "cfg" / "config.json", "--tp_size", tp,
                              "--pp_size", pp] + [e.replace("save", "load") for e in extra]
                    r = self.convert("--input_dir", work / "pre" / "model.pt", "--output_dir", out,
                                     "--convert_from_full_state", *common, *extra)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    names = sorted(p.name for p in (out / "model").glob("dp_rank_*_pp_rank_??.pt"))
                    self.assertEqual(names, [f"dp_rank_00_tp_rank_{t:02d}_pp_rank_{p:02d}.pt"
                                             for t in range(tp) for p in range(pp)])
                    shard = nxd_checkpoint.load_file(out / "model" / names[0])
                    self.assertIn("model.layers.0.mlp.gate_up_proj.weight", shard)
                    if pp == 2:
                        self.assertNotIn("lm_head.weight", shard)  # last PP rank only
                    r = self.convert("--input_dir", out / "model", "--output_dir", work / "back",
                                     "--convert_to_full_state", *common)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    back = torch.load(work / "back" / "checkpoint.pt")
                    self.assertEqual(sorted(back), sorted(full))
                    for name in full:
                        self.assertTrue(torch.equal(back[name], full[name]), name)

    def test_refusals(self):
        with tempfile.TemporaryDirectory() as d:
            work = Path(d)
            make_inputs(work)
            base = ["--input_dir", work / "pre" / "model.pt", "--output_dir", work / "o", "--config",
                    work / "cfg" / "config.json", "--convert_from_full_state"]
            r = self.convert(*base)  # no --hw_backend: required, as upstream
            self.assertEqual(r.returncode, 2)
            self.assertIn("--hw_backend", r.stderr)
            r = self.convert(*base, "--hw_backend", "trn1", "--tp_sise", "2")  # ignored as upstream does...
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("ignores: --tp_sise 2", r.stderr)
            r = run([PY, LLAMA / "convert_checkpoints.py", *base, "--hw_backend", "trn1", "--tp_sise", "2"],
                    env={"TRNSLURM_STANDIN_STRICT": "1"})  # ...and refused when the tests ask
            self.assertEqual(r.returncode, 2)
            r = self.convert(*base[:-1], "--hw_backend", "trn1", "--convert_to_xser", "--output_dir", work / "x")
            self.assertEqual(r.returncode, 2)
            self.assertIn("TypeError", r.stderr)
            self.assertFalse((work / "x").exists())


if __name__ == "__main__":
    unittest.main()
