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

from cpu_backend import arrow_ipc, hf_dataset, neuron_cache, nxd_checkpoint, parallel_compile  # noqa: E402

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
    kind = ACTIONS.get(type(action), "other")
    # A switch takes no value: argparse stores nargs 0 for it, the record what the source wrote (none).
    nargs = None if kind in ("store_true", "store_false", "store_const", "count") else action.nargs
    return {"names": list(action.option_strings), "dest": action.dest, "action": kind,
            "type": None if t is None else t.__name__ if t in (int, float, str, bool) else f"other:{t!r}",
            "required": action.required, "default": action.default, "nargs": nargs,
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
                    default = flag.get("default")
                    if default is None:  # none written: argparse's own (False for store_true)
                        default = {"store_true": False, "store_false": True}.get(flag["action"])
                    if not isinstance(default, dict):  # {"expr": ...}: not a literal
                        self.assertEqual(mine[dest]["default"], default, f"{rel} {dest} default")

    def test_neuron_parallel_compile_options_equal_the_record(self):
        record = SOURCE / "interfaces" / "neuron_parallel_compile-2.29.json"
        if not record.is_file():
            self.skipTest(f"{record} is not there")
        options = json.loads(record.read_text())["tool"]["options"]
        parser = parallel_compile.build_parser()
        mine = {a.option_strings[0]: a for a in parser._actions if a.option_strings and a.dest != "help"}
        self.assertEqual(sorted(mine), sorted(o["names"][0] for o in options))
        for o in options:
            values = mine[o["names"][0]].choices
            self.assertEqual(None if values is None else [str(v) for v in values], o.get("values"), o["names"])


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


def free_port():
    # Not torchrun --standalone: its rendezvous is always localhost:29400, shared by every checkout.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LOG_LINE = re.compile(r"^LOG \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4} - \((\d+), (\d+)\) step_loss : (\d+\.\d{4}) "
                      r"learning_rate : (\d\.\d\de[-+]\d\d) throughput : (\d+\.\d\d) seq/s $")
PP_LINE = re.compile(r"^step (\d+) step_time [\d.e-]+s throughput [\d.e+-]+ seq/s step loss ([\d.]+) grad norm [\d.]+$")


class TrainerTest(unittest.TestCase):
    """Each trainer on 2 torchrun workers of this machine with TP 2 (tp_zero1) or PP 2 (run_llama_nxd)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.work = Path(cls.tmp.name)
        make_inputs(cls.work, tokens=2400, seq_len=16)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def torchrun(self, script, args, env=None, launcher=()):
        env = dict(env or {})
        env.setdefault("NEURON_CC_FLAGS", f"--model-type transformer --cache_dir={self.work / 'cache'}")
        env["PATH"] = f"{VENV}:{os.environ['PATH']}"
        return run([*launcher, VENV / "torchrun", "--nnodes", 1, "--node_rank", 0, "--master_addr", "127.0.0.1",
                    "--master_port", free_port(), "--nproc_per_node", 2, script, *args], env=env, cwd=self.work)

    def convert(self, out, *flags):
        r = run([VENV / "python3", LLAMA / "convert_checkpoints.py", "--input_dir", self.work / "pre" / "model.pt",
                 "--output_dir", out / "pretrained_weight", "--hw_backend", "trn1", "--config",
                 self.work / "cfg" / "config.json", "--convert_from_full_state", *flags])
        self.assertEqual(r.returncode, 0, r.stderr)

    def zero1_args(self, ckpt, steps):
        # GBS 8 = micro-batch 2 x accumulation 4 x DP 1 (2 workers, TP 2).
        return ["--model_path", self.work / "cfg", "--data_dir", self.work / "data", "--tensor_parallel_size", 2,
                "--batch_size", 2, "--grad_accum_usteps", 4, "--max_steps", 40, "--steps_this_run", steps,
                "--warmup_steps", 2, "--lr", "3e-3", "--seq_len", 16, "--checkpoint_dir", ckpt, "--checkpoint_freq",
                3, "--num_kept_checkpoint", 2, "--pretrained_weight", "--loading_step", "latest_if_exists",
                "--output_dir", self.work / "out", "--metrics_file", self.work / "out" / "results.json"]

    def events(self, path):
        return [json.loads(line) for line in path.read_text().splitlines()]

    def test_tp_zero1_checkpoints_log_and_resume(self):
        script = LLAMA / "tp_zero1_llama_hf_pretrain" / "tp_zero1_llama_hf_pretrain.py"
        ckpt, log = self.work / "z1", self.work / "z1.jsonl"
        self.convert(ckpt, "--tp_size", 2)
        env = {"TRNSLURM_STANDIN_LOG": str(log)}
        first = self.torchrun(script, self.zero1_args(ckpt, 7), env)
        self.assertEqual(first.returncode, 0, first.stderr[-3000:])
        lines = [m for m in map(LOG_LINE.match, first.stdout.splitlines()) if m]
        self.assertEqual([(int(m[1]), int(m[2])) for m in lines], [(0, s) for s in range(1, 8)])
        self.assertIn("Epoch 0 begin ", first.stdout)
        self.assertRegex(first.stdout, r"Epoch 0 step 7 end .* loss [\d.]+ perf [\d.]+ seq/sec \(at train microstep 28 ")
        # NxD's layout; kept checkpoints pruned to 2; no checkpoint at the last step (upstream saves
        # only every checkpoint_freq steps).
        self.assertEqual(nxd_checkpoint.completed_tags(ckpt), ["step_3", "step_6"])
        tag = ckpt / "step_6"
        self.assertEqual(sorted(p.name for p in tag.iterdir()),
                         ["checkpoint", "done", "model", "optim", "scheduler.pt", "user_content.pt"])
        self.assertTrue(nxd_checkpoint.is_xser(tag))
        self.assertEqual(sorted(p.name for p in (tag / "model").glob("*.pt") if p.name.startswith("dp") and
                                p.name.endswith("_00.pt")),
                         ["dp_rank_00_tp_rank_00_pp_rank_00.pt", "dp_rank_00_tp_rank_01_pp_rank_00.pt"])
        self.assertEqual(torch.load(tag / "user_content.pt")["global_step"], 6)
        start = next(e for e in self.events(log) if e["event"] == "start")
        self.assertEqual((start["dp"], start["micro_batch"], start["grad_accum"], start["gbs"]), (1, 2, 4, 8))
        self.assertEqual(start["micro_per_epoch"], len(hf_dataset.HFDataset(self.work / "data")) // 2)
        self.assertEqual(start["accepted_only"]["use_flash_attention"], 1)
        self.assertIn("Final loss", (self.work / "out" / "results.json").read_text())

        # Resume from the newest checkpoint (step 6) to step 10: the same weights as a run that
        # never stopped, in another directory.
        rest = self.torchrun(script, self.zero1_args(ckpt, 10), env)
        self.assertEqual(rest.returncode, 0, rest.stderr[-3000:])
        self.assertEqual([e["resumed_from"] for e in self.events(log) if e["event"] == "start"], [None, 6])
        self.assertEqual(nxd_checkpoint.completed_tags(ckpt), ["step_6", "step_9"])
        whole = self.work / "z1b"
        self.convert(whole, "--tp_size", 2)
        again = self.torchrun(script, self.zero1_args(whole, 10))
        self.assertEqual(again.returncode, 0, again.stderr[-3000:])
        for t in range(2):
            name = f"model/dp_rank_00_tp_rank_{t:02d}_pp_rank_00.pt"
            a, b = nxd_checkpoint.load_file(ckpt / "step_9" / name), nxd_checkpoint.load_file(whole / "step_9" / name)
            for k in a:
                self.assertTrue(torch.equal(a[k], b[k]), k)

    def test_run_llama_nxd_pipeline(self):
        script = LLAMA / "tp_pp_llama_hf_pretrain" / "run_llama_nxd.py"
        ckpt = self.work / "pp"
        self.convert(ckpt, "--pp_size", 2, "--save_xser", "1")
        args = ["--training_config", self.work / "cfg", "--training_dir", self.work / "data",
                "--tensor_parallel_size", 1, "--pipeline_parallel_size", 2, "--train_batch_size", 4,
                "--num_microbatches", 2, "--max_steps", 4, "--warmup_steps", 1, "--lr", "3e-3", "--min_lr", "1e-4",
                "--seq_len", 16, "--checkpoint_dir", ckpt, "--checkpoint_freq", 2, "--pretrained_weight", 1,
                "--metrics_file", self.work / "pp.json"]
        log = self.work / "pp.jsonl"
        r = self.torchrun(script, args + ["--num_layers", 1], {"TRNSLURM_STANDIN_LOG": str(log)})
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertIn("ignores: --num_layers 1", r.stderr)  # upstream's flag is --num_layer
        steps = [int(m[1]) for m in map(PP_LINE.match, r.stdout.splitlines()) if m]
        self.assertEqual(steps, [0, 1, 2, 3])
        self.assertEqual(r.stdout.count("Training finished successfully"), 2)
        start = next(e for e in self.events(log) if e["event"] == "start")
        # GBS = train_batch_size x DP; micro-batch = train_batch_size / num_microbatches.
        self.assertEqual((start["dp"], start["micro_batch"], start["grad_accum"], start["gbs"]), (1, 2, 2, 4))
        self.assertEqual(nxd_checkpoint.completed_tags(ckpt), ["step_2", "step_4"])
        self.assertEqual(sorted(p.name for p in (ckpt / "step_4" / "model").glob("dp_*_??.pt")),
                         ["dp_rank_00_tp_rank_00_pp_rank_00.pt", "dp_rank_00_tp_rank_00_pp_rank_01.pt"])
        self.assertEqual(torch.load(ckpt / "step_4" / "user_content.pt")["total_steps"], 4)
        # The tests' own strictness: the ignored flag is an error, before anything starts.
        strict = run([VENV / "python3", script, *args, "--num_layers", 1], env={"TRNSLURM_STANDIN_STRICT": "1"})
        self.assertEqual(strict.returncode, 2)
        self.assertIn("ignores: --num_layers 1", strict.stderr)

    def test_tp_zero1_refuses_a_wrong_flag(self):
        script = LLAMA / "tp_zero1_llama_hf_pretrain" / "tp_zero1_llama_hf_pretrain.py"
        r = run([VENV / "python3", script, "--global_batch_size", 8, "--steps_this_run", 1])
        self.assertEqual(r.returncode, 2)
        self.assertIn("unrecognized arguments: --global_batch_size", r.stderr)
        r = run([VENV / "python3", script, "--pretrained_weight", "some/dir"])
        self.assertEqual(r.returncode, 2)  # a switch: it takes no value

    def test_tp_zero1_on_trn3_only_without_qkv_linear(self):
        # NxD 2.29's QKV linear initialises kv weights for trn1 and trn2 only (qkv_linear.py).
        script = LLAMA / "tp_zero1_llama_hf_pretrain" / "tp_zero1_llama_hf_pretrain.py"
        ckpt, trn3 = self.work / "trn3", {"TRNSLURM_STANDIN_HW_BACKEND": "trn3"}
        self.convert(ckpt, "--tp_size", 2)
        refused = self.torchrun(script, self.zero1_args(ckpt, 1) + ["--qkv_linear"], trn3)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("--qkv_linear on trn3", refused.stderr)
        ran = self.torchrun(script, self.zero1_args(ckpt, 1), trn3)
        self.assertEqual(ran.returncode, 0, ran.stderr[-3000:])

    def test_precompile_warms_what_training_uses(self):
        script = LLAMA / "tp_zero1_llama_hf_pretrain" / "tp_zero1_llama_hf_pretrain.py"
        ckpt, cache, log = self.work / "pc", self.work / "pc-cache", self.work / "pc.jsonl"
        self.convert(ckpt, "--tp_size", 2)
        env = {"NEURON_CC_FLAGS": f"--model-type transformer --cache_dir={cache}",
               "NEURON_COMPILE_CACHE_URL": str(self.work / "not-this-one"), "TRNSLURM_STANDIN_LOG": str(log)}
        pre = self.torchrun(script, self.zero1_args(ckpt, 2), env, launcher=[VENV / "neuron_parallel_compile"])
        self.assertEqual(pre.returncode, 0, pre.stderr[-3000:])
        self.assertIn("Total failed compilations: 0", pre.stdout)
        self.assertNotIn("LOG ", pre.stdout)
        self.assertEqual(nxd_checkpoint.completed_tags(ckpt), [])  # a compile-only run writes no checkpoint
        entries = sorted((cache / f"neuronxcc-{neuron_cache.COMPILER_VERSION}").glob("MODULE_*"))
        self.assertEqual(len(entries), 2)
        for e in entries:
            self.assertRegex(e.name, r"^MODULE_\d+\+[0-9a-f]{8}$")
            self.assertEqual(sorted(p.name for p in e.iterdir()),
                             ["compile_flags.json", "model.done", "model.hlo_module.pb", "model.neff"])
        self.assertFalse((self.work / "not-this-one").exists())
        train = self.torchrun(script, self.zero1_args(ckpt, 3), env)
        self.assertEqual(train.returncode, 0, train.stderr[-3000:])
        used = [e for e in self.events(log) if e["event"] == "compile_cache"]
        self.assertEqual([e["state"] for e in used], ["extracted", "extracted", "hit", "hit"])
        self.assertEqual({e["entry"] for e in used}, {str(e) for e in entries})
        # Another micro-batch is another graph: a miss, compiled and logged as such.
        other = self.torchrun(script, [*self.zero1_args(ckpt, 1), "--batch_size", 1], env)
        self.assertEqual(other.returncode, 0, other.stderr[-3000:])
        self.assertIn("cache miss: compiling", other.stdout)
        # A graph whose compilation failed is marked with model.log and not retried.
        broken = entries[0]
        for f in ("model.done", "model.neff"):
            (broken / f).unlink()
        (broken / "model.hlo_module.pb").write_text("not a graph")
        again = run([VENV / "neuron_parallel_compile", "--command", "compile"], env=env)
        self.assertEqual(again.returncode, 1)
        self.assertTrue((broken / "model.log").is_file())
        self.assertFalse((broken / "model.done").exists())


if __name__ == "__main__":
    unittest.main()
