"""The TorchTitan stand-in (scripts/cpu/torchtitan-neuron, torchtitan-venv, make_titan_inputs.py):
its command line is the record's and as strict, its step line, checkpoints, resume, the initial-load
trap, the HF conversion round trip, the data split and LR schedule, and a two-process torchrun run.
Run by CTest as cpu.titan_standin (label cpu) with Debian's python3 (torch 1.13)."""

import contextlib
import io
import json
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

import torch

SOURCE = Path(os.environ.get("TRNSLURM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CPU = SOURCE / "scripts" / "cpu"
ROOT = CPU / "torchtitan-neuron"
VENV = CPU / "torchtitan-venv" / "bin"
RECORD = SOURCE / "interfaces" / "torchtitan-neuron-2.33.json"
CONVERT = ROOT / "scripts" / "checkpoint_conversion"

from torchtitan.components import lr_scheduler  # noqa: E402
from torchtitan.config import manager  # noqa: E402
from torchtitan.hf_datasets.text_datasets import DatasetError, load_documents, shard_bounds  # noqa: E402
from torchtitan.tools import safetensors_io  # noqa: E402

TINY = ["--module", "torchtitan_neuron.models.qwen3", "--config", "qwen3_tiny_cpu"]
STEP_LINE = re.compile(r"\[titan\] \S+ \S+ - root - INFO - \x1b\[31mstep:  ?(\d+)  \x1b\[32mloss: +([0-9.]+)  "
                       r"\x1b\[38;2;180;60;0mgrad_norm: +[0-9.]+  \x1b\[38;2;54;234;195mmemory: +[0-9.]+GiB\([0-9.]+%\)  "
                       r"\x1b\[34mtps: [0-9,]+  \x1b\[36mtflops: [0-9,.]+  \x1b\[35mmfu: N/A\x1b\[39m$")


def run(args, env=None, cwd=ROOT):
    full = {k: v for k, v in os.environ.items() if not k.startswith("TRNSLURM_STANDIN_")}
    full.update(env or {})
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, env=full, cwd=cwd)


_INPUTS = {}


def setUpModule():
    tmp = tempfile.TemporaryDirectory()
    done = run([VENV / "python3", CPU / "make_titan_inputs.py", Path(tmp.name) / "in", "--docs", "60"])
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    _INPUTS["tmp"] = tmp


def tearDownModule():
    _INPUTS.pop("tmp").cleanup()


class Inputs(unittest.TestCase):
    """The inputs make_titan_inputs.py writes (once for the module) and a scratch directory per class."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)
        made = Path(_INPUTS["tmp"].name) / "in"
        cls.data, cls.hf = made / "data", made / "hf"

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def train(self, out, *extra, env=None, python=None):
        args = [python or VENV / "python3", "-m", "torchtitan.train", *TINY, "--dataloader.dataset_path", self.data,
                "--dump_folder", out, "--hf_assets_path", self.hf, *extra]
        return run(args, env=env)

    def events(self, path):
        return [json.loads(line) for line in Path(path).read_text().splitlines()]


class CommandLine(Inputs):
    """Parsed in this process (torchtitan.config.manager.parse_args) but for the exit-code test."""

    def parse(self, *args):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                manager.parse_args([*TINY, *args])
            except SystemExit as e:
                return e.code, err.getvalue()
        return 0, err.getvalue()

    def assertUsage(self, got, text):
        code, err = got
        self.assertEqual(code, 2, err)
        self.assertIn(text, err)

    def test_unknown_flag_exits_2_with_did_you_mean(self):
        done = self.train(self.dir / "o1", "--training.step", "3")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("Unrecognized options: --training.step", done.stderr)
        self.assertIn("Did you mean --training.steps", done.stderr)
        self.assertFalse((self.dir / "o1").exists())

    def test_accepted_forms(self):
        config = manager.parse_args([*TINY, "--training.local-batch-size=4", "--parallelism.no_enable_sequence_parallel",
                                     "--checkpoint.exclude_from_loading", "dataloader,optimizer",
                                     "--lr_scheduler.decay_ratio", "None", "--debug.seed", "7"])
        self.assertEqual(config.training.local_batch_size, 4)
        self.assertFalse(config.parallelism.enable_sequence_parallel)
        self.assertEqual(config.checkpoint.exclude_from_loading, ["dataloader", "optimizer"])
        self.assertIsNone(config.lr_scheduler.decay_ratio)
        self.assertEqual(config.debug.seed, 7)
        self.assertEqual(config.training.seq_len, 32)  # the registry's, not the record's default

    def test_moved_flag_is_unknown(self):
        self.assertUsage(self.parse("--job.dump_folder", "/tmp/x"), "Unrecognized options")

    def test_bad_int_and_choice(self):
        self.assertUsage(self.parse("--training.steps", "ten"), "'ten' is not an int")
        self.assertUsage(self.parse("--lr_scheduler.decay_type", "exp"), "'exp' is not one of")

    def test_bool_takes_no_value(self):
        self.assertUsage(self.parse("--checkpoint.enable=False"), "takes no value")

    def test_value_missing_and_stray_word(self):
        self.assertUsage(self.parse("--training.steps"), "expected a value")
        self.assertUsage(self.parse("stray"), "unrecognized arguments: stray")

    def test_module_and_config_required(self):
        with self.assertRaisesRegex(ValueError, "--module is required"):
            manager.parse_args(["--config", "qwen3_tiny_cpu"])

    def test_unknown_config_names_the_available_ones(self):
        with self.assertRaisesRegex(ValueError, "qwen3_8b_tp4_fsdp16_sac"):
            manager.parse_args(["--module", "torchtitan_neuron.models.qwen3", "--config", "qwen3_8b"])

    def test_the_record_is_the_single_copy(self):
        """A record without training.steps makes the stand-in refuse the flag."""
        record = json.loads(RECORD.read_text())
        script = record["scripts"]["torchtitan/train.py"]
        script["flags"] = [f for f in script["flags"] if f["dest"] != "training.steps"]
        record["torchtitan"]["fields"] = [f for f in record["torchtitan"]["fields"] if f["name"] != "training.steps"]
        changed = self.dir / "changed.json"
        changed.write_text(json.dumps(record))
        done = self.train(self.dir / "o5", "--training.steps", "2", env={"TRNSLURM_TORCHTITAN_RECORD": str(changed)})
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("training.steps", done.stderr)

    def test_help_lists_the_record_flags(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as e:
            manager.parse_args(["--help"])
        self.assertEqual(e.exception.code, 0)
        self.assertIn("--training.local_batch_size, --training.local-batch-size int (default: 8)", out.getvalue())
        self.assertIn("--checkpoint.no_enable", out.getvalue())


class Training(Inputs):
    def test_step_line_colours_and_plain(self):
        done = self.train(self.dir / "log", "--training.steps", "2", "--dataloader.dataset_path", self.data)
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = [line for line in done.stdout.splitlines() if "step:" in line]
        self.assertEqual([STEP_LINE.match(line).group(1) for line in lines], ["1", "2"])
        done = self.train(self.dir / "log2", "--training.steps", "1", "--metrics.disable_color_printing")
        line = next(line for line in done.stdout.splitlines() if "step:" in line)
        self.assertNotIn("\x1b", line)
        self.assertRegex(line, r" - root - INFO - step:  1  loss: +[0-9.]+  grad_norm: .*  tps: [0-9,]+  "
                               r"tflops: [0-9.]+  mfu: N/A$")

    def test_log_freq(self):
        done = self.train(self.dir / "freq", "--training.steps", "5", "--metrics.log_freq", "2")
        steps = [int(m) for m in re.findall(r"step: +(\d+)  ", done.stdout)]
        self.assertEqual(steps, [1, 2, 4])

    def test_resume_equals_an_uninterrupted_run(self):
        common = ["--checkpoint.enable", "--checkpoint.interval", "3", "--checkpoint.no-last-save-model-only"]
        whole = self.train(self.dir / "whole", "--training.steps", "6", *common)
        self.assertEqual(whole.returncode, 0, whole.stderr)
        first = self.train(self.dir / "parts", "--training.steps", "6", *common,
                           env={"TRNSLURM_STANDIN_FAIL_AFTER": "4"})
        self.assertEqual(first.returncode, 1, first.stderr)
        self.assertFalse((self.dir / "parts" / "checkpoint" / "step-6").exists())
        second = self.train(self.dir / "parts", "--training.steps", "6", *common)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn("Loading the checkpoint from", second.stdout)
        self.assertIn("Training starts at step 4", second.stdout)
        a = torch.load(self.dir / "whole" / "checkpoint" / "step-6" / "__0_0.distcp")["model"]
        b = torch.load(self.dir / "parts" / "checkpoint" / "step-6" / "__0_0.distcp")["model"]
        self.assertEqual(sorted(a), sorted(b))
        for name in a:
            self.assertTrue(torch.equal(a[name], b[name]), name)

    def test_resume_picks_the_highest_complete_step_and_keeps_k(self):
        out = self.dir / "keep"
        done = self.train(out, "--training.steps", "4", "--checkpoint.enable", "--checkpoint.interval", "1",
                          "--checkpoint.keep_latest_k", "2", "--checkpoint.no_last_save_model_only")
        self.assertEqual(done.returncode, 0, done.stderr)
        folder = out / "checkpoint"
        self.assertEqual(sorted(p.name for p in folder.iterdir()), ["step-3", "step-4"])
        (folder / "step-4" / ".metadata").unlink()  # step-4 incomplete: step-3 is the newest complete one
        again = self.train(out, "--training.steps", "5", "--checkpoint.enable", "--checkpoint.interval", "10",
                           "--checkpoint.no_last_save_model_only")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertIn("step-3.", again.stdout)
        self.assertIn("Training starts at step 4", again.stdout)

    def test_last_save_model_only_is_not_resumable(self):
        out = self.dir / "modelonly"
        self.assertEqual(self.train(out, "--training.steps", "2", "--checkpoint.enable").returncode, 0)
        meta = torch.load(out / "checkpoint" / "step-2" / ".metadata")
        self.assertTrue(meta["model_only"])
        again = self.train(out, "--training.steps", "4", "--checkpoint.enable")
        self.assertNotEqual(again.returncode, 0)
        self.assertIn("holds the model only", again.stderr)

    def hf_loss(self, out, env):
        done = self.train(out, "--training.steps", "1", "--checkpoint.enable", "--checkpoint.initial_load_in_hf",
                          "--checkpoint.initial_load_path", self.hf, env=env)
        self.assertEqual(done.returncode, 0, done.stderr)
        return float(re.search(r"loss: +([0-9.]+)", done.stdout).group(1)), done.stdout

    def test_the_initial_load_trap(self):
        hf_loss, log = self.hf_loss(self.dir / "fresh", None)
        self.assertIn("Loading HF safetensors from", log)
        random_loss = float(re.search(r"loss: +([0-9.]+)", self.train(self.dir / "rnd", "--training.steps", "1")
                                      .stdout).group(1))
        self.assertNotEqual(hf_loss, random_loss)
        # The folder exists with no complete step: upstream before 2026-07-22 starts from random weights.
        trapped = self.dir / "trapped"
        (trapped / "checkpoint" / "step-5").mkdir(parents=True)
        loss, log = self.hf_loss(trapped, None)
        self.assertNotIn("Loading HF", log)
        self.assertEqual(loss, random_loss)
        # c82675eb6's rule loads the HF weights all the same.
        fixed = self.dir / "fixed"
        (fixed / "checkpoint" / "step-5").mkdir(parents=True)
        loss, log = self.hf_loss(fixed, {"TRNSLURM_STANDIN_INITIAL_LOAD": "no_valid_step"})
        self.assertIn("Loading HF safetensors from", log)
        self.assertEqual(loss, hf_loss)

    def test_lr_schedule_and_batch_rule(self):
        events = self.dir / "events.jsonl"
        done = self.train(self.dir / "lr", "--training.steps", "6", "--lr_scheduler.warmup_steps", "2",
                          env={"TRNSLURM_STANDIN_LOG": str(events)})
        self.assertEqual(done.returncode, 0, done.stderr)
        lrs = [e["lr"] for e in self.events(events) if e["event"] == "step"]
        expected = [1e-3 * f for f in (0.5, 1.0, 1.0, 0.75, 0.5, 0.25)]
        for got, want in zip(lrs, expected):
            self.assertAlmostEqual(got, want)
        self.assertEqual(len(lrs), 6)
        bad = self.train(self.dir / "gbs", "--training.global_batch_size", "3")
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("global batch size must be multiple of local batch size", bad.stderr)

    def test_two_processes_with_torchrun(self):
        events = self.dir / "tr.jsonl"
        args = [VENV / "torchrun", "--nproc_per_node", "2", "--rdzv_backend", "c10d", "--rdzv_endpoint", "localhost:0",
                "--local-ranks-filter", "0", "--role", "rank", "--tee", "3", "-m", "torchtitan.train", *TINY,
                "--dataloader.dataset_path", self.data, "--dump_folder", self.dir / "tr", "--hf_assets_path", self.hf,
                "--training.steps", "2", "--training.global_batch_size", "8", "--checkpoint.enable"]
        done = run(args, env={"TRNSLURM_STANDIN_LOG": str(events)})
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        lines = [line for line in done.stdout.splitlines() if "step:" in line]
        self.assertEqual(len(lines), 2)
        self.assertTrue(all(line.startswith("[rank0]:[titan]") for line in lines), lines)
        self.assertNotIn("[rank1]:", done.stdout)
        start = next(e for e in self.events(events) if e["event"] == "start")
        self.assertEqual((start["dp"], start["grad_accum"], start["global_batch"]), (2, 2, 8))
        self.assertTrue((self.dir / "tr" / "checkpoint" / "step-2" / ".metadata").exists())


class Conversion(Inputs):
    def test_round_trip(self):
        dcp, back = self.dir / "dcp", self.dir / "back"
        done = run([VENV / "python3", CONVERT / "convert_from_hf.py", self.hf, dcp, "--model_name", "qwen3",
                    "--model_flavor", "tiny"])
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue((dcp / ".metadata").exists())
        done = run([VENV / "python3", CONVERT / "convert_to_hf.py", dcp, back, "--hf_assets_path", self.hf,
                    "--model_name", "qwen3", "--model_flavor", "tiny"])
        self.assertEqual(done.returncode, 0, done.stderr)
        a, b = safetensors_io.load_dir(self.hf), safetensors_io.load_dir(back)
        self.assertEqual(sorted(a), sorted(b))
        for name in a:
            self.assertTrue(torch.equal(a[name], b[name]), name)
        self.assertFalse((back / "config.json").exists())  # upstream's converter writes weights only

    def test_trained_checkpoint_exports_in_bfloat16(self):
        out = self.dir / "exp"
        self.assertEqual(self.train(out, "--training.steps", "1", "--checkpoint.enable").returncode, 0)
        done = run([VENV / "python3", CONVERT / "convert_to_hf.py", out / "checkpoint" / "step-1", self.dir / "exp_hf",
                    "--hf_assets_path", self.hf, "--model_name", "qwen3", "--model_flavor", "tiny",
                    "--export_dtype", "bfloat16"])
        self.assertEqual(done.returncode, 0, done.stderr)
        tensors = safetensors_io.load_dir(self.dir / "exp_hf")
        self.assertEqual(tensors["lm_head.weight"].dtype, torch.bfloat16)

    def test_strict_flags(self):
        done = run([VENV / "python3", CONVERT / "convert_to_hf.py", self.hf, self.dir / "x", "--export_dtype", "bf16"])
        self.assertEqual(done.returncode, 2)
        done = run([VENV / "python3", CONVERT / "convert_from_hf.py", self.hf, self.dir / "x", "--model", "qwen3"])
        self.assertEqual(done.returncode, 2)

    def test_wrong_model_is_refused(self):
        done = run([VENV / "python3", CONVERT / "convert_from_hf.py", self.hf, self.dir / "y", "--model_name", "qwen3",
                    "--model_flavor", "8B"])
        self.assertEqual(done.returncode, 1)
        self.assertIn("hidden_size", done.stderr)


class Data(unittest.TestCase):
    def test_contiguous_shards(self):
        self.assertEqual([shard_bounds(10, 3, r) for r in range(3)], [(0, 4), (4, 7), (7, 10)])

    def test_missing_text_column_names_file_and_byte(self):
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "a.jsonl").write_text('{"text": "ok"}\n{"body": "no"}\n')
            with self.assertRaisesRegex(DatasetError, r"a\.jsonl: byte 15: no `text` column"):
                load_documents(tmp)

    def test_parquet_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "a.parquet").write_bytes(b"PAR1")
            with self.assertRaisesRegex(DatasetError, "pyarrow"):
                load_documents(tmp)

    def test_lr_factor_cosine_floor(self):
        self.assertAlmostEqual(lr_scheduler.factor(9, 0, 0, 10, "cosine", 0.1), 0.1)


if __name__ == "__main__":
    unittest.main()
