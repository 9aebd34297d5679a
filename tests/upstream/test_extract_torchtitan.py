"""tools/upstream-interface/extract_torchtitan.py and interfaces/torchtitan-neuron-2.33.json.

Always: the committed record holds what the core and the CPU stand-in rely on (every config
field is a flag of the entry point, bools as --x/--no_x/--no-x pairs, the step line, the
checkpoint layout, the NOT SEEN list), and the format check refuses hand-broken copies.
With a pytorch/torchtitan clone in TRNSLURM_TORCHTITAN_REPO: the record is rebuilt byte for byte
from its commit (skipped otherwise, as the other extractors' tests are)."""

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOLS = os.path.join(ROOT, "tools", "upstream-interface")

import record_format  # noqa: E402

TOOL = os.path.join(TOOLS, "extract_torchtitan.py")
RECORD = os.path.join(ROOT, "interfaces", "torchtitan-neuron-2.33.json")
TRAIN = "torchtitan/train.py"


def load():
    with open(RECORD, encoding="utf-8") as f:
        return json.load(f)


def extract(repo, rev, out, *extra):
    argv = [sys.executable, TOOL, "--repo", repo, "--rev", rev, "--release", "2.33", "--out", out, *extra]
    return subprocess.run(argv, capture_output=True, text=True, check=False)


class CommittedRecord(unittest.TestCase):
    def setUp(self):
        self.record = load()
        self.flags = self.record["scripts"][TRAIN]["flags"]
        self.by_name = {n: f for f in self.flags for n in f["names"]}

    def test_module_and_config_are_required(self):
        for name in ("--module", "--config"):
            self.assertTrue(self.by_name[name]["required"], name)
        self.assertTrue(self.record["torchtitan"]["config_selection"]["fully_qualified_module"])

    def test_strict_without_abbreviations(self):
        script = self.record["scripts"][TRAIN]
        self.assertEqual(script["parse"], "strict")
        self.assertFalse(script["allow_abbrev"])
        self.assertEqual(self.record["torchtitan"]["cli"]["unknown_flag_exit"], 2)

    def test_every_field_has_its_flags(self):
        for field in self.record["torchtitan"]["fields"]:
            with self.subTest(field=field["name"]):
                flag = self.by_name["--" + field["name"]]
                self.assertEqual(flag["dest"], field["name"])
                self.assertIn("--" + field["name"].replace("_", "-"), self.by_name)

    def test_bools_are_switch_pairs(self):
        on = self.by_name["--checkpoint.enable"]
        off = self.by_name["--checkpoint.no-enable"]
        self.assertEqual((on["action"], off["action"]), ("store_true", "store_false"))
        self.assertIs(self.by_name["--checkpoint.no_enable"], off)
        self.assertEqual(on["dest"], off["dest"])
        self.assertIn("--metrics.no-disable-color-printing", self.by_name)

    def test_the_fields_trnslurm_renders(self):
        expect = {
            "--training.local_batch_size": ("int", 8), "--training.global_batch_size": ("int", -1),
            "--training.seq_len": ("int", 2048), "--training.steps": ("int", 10000),
            "--lr_scheduler.warmup_steps": ("int", 200), "--lr_scheduler.decay_ratio": ("other:float | None", None),
            "--parallelism.tensor_parallel_degree": ("int", 1),
            "--parallelism.data_parallel_shard_degree": ("int", -1),
            "--checkpoint.interval": ("int", 500), "--checkpoint.keep_latest_k": ("int", 10),
            "--checkpoint.folder": ("str", "checkpoint"), "--dump_folder": ("str", "./outputs"),
            "--hf_assets_path": ("str", "./tests/assets/tokenizer"),
            "--dataloader.dataset_path": ("other:str | None", None),
            "--checkpoint.initial_load_path": ("other:str | None", None),
            "--metrics.log_freq": ("int", 10),
        }
        for name, (kind, default) in expect.items():
            with self.subTest(flag=name):
                self.assertEqual((self.by_name[name]["type"], self.by_name[name]["default"]), (kind, default))
        self.assertEqual(self.by_name["--lr_scheduler.decay_type"]["choices"], ["linear", "sqrt", "cosine"])
        self.assertEqual(self.by_name["--checkpoint.last_save_model_only"]["default"], True)
        self.assertEqual(self.by_name["--checkpoint.exclude_from_loading"]["type"], "other:list[str]")

    def test_moved_and_removed_flags_are_absent(self):
        for gone in ("--job.dump_folder", "--model.hf_assets_path", "--training.dataset", "--training.dataset_path",
                     "--model.name", "--model.flavor"):
            self.assertNotIn(gone, self.by_name, gone)

    def test_step_line(self):
        fmt = self.record["log_formats"][self.record["torchtitan"]["log"]["step_key"]]
        text = "".join(p if isinstance(p, str) else "{}" for p in fmt["pieces"])
        self.assertEqual(text, "{}step: {}  {}loss: {}  {}grad_norm: {}  {}memory: {}GiB({}%)  {}tps: {}  "
                               "{}tflops: {}  {}mfu: {}{}")
        self.assertEqual(fmt["call"]["counted"], {"self.step": "before"})  # the step logged is the one just done
        self.assertEqual(fmt["call"]["arguments"]["step"], "self.step")
        log = self.record["torchtitan"]["log"]
        self.assertEqual(log["line_format"], "[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s")
        self.assertEqual(log["colors"]["red"], "\033[31m")

    def test_checkpoint_layout(self):
        ckpt = self.record["torchtitan"]["checkpoint"]
        self.assertEqual(ckpt["step_dir"], "step-{step}")
        self.assertIn(".metadata", ckpt["complete_when"])

    def test_launcher(self):
        launcher = self.record["torchtitan"]["launcher"]
        command = launcher["command"]
        self.assertEqual(command[0], "torchrun")
        self.assertEqual(command[command.index("-m") + 1], "torchtitan.train")
        self.assertEqual(launcher["nproc_per_node_from"], "NGPU")

    def test_conversion_scripts(self):
        to_hf = {n for f in self.record["scripts"]["scripts/checkpoint_conversion/convert_to_hf.py"]["flags"]
                 for n in f["names"]}
        self.assertEqual(to_hf, {"input_dir", "output_dir", "--hf_assets_path", "--model_name", "--model_flavor",
                                 "--export_dtype"})

    def test_not_seen_is_said(self):
        self.assertTrue(self.record["torchtitan"]["not_seen"])


class BrokenCopies(unittest.TestCase):
    def setUp(self):
        self.record = load()

    def assertCaught(self, record, text):
        found = record_format.problems(record)
        self.assertTrue(any(text in p for p in found), found)

    def test_a_field_without_its_flag(self):
        record = copy.deepcopy(self.record)
        record["scripts"][TRAIN]["flags"] = [f for f in record["scripts"][TRAIN]["flags"]
                                             if f["dest"] != "training.steps"]
        self.assertCaught(record, "training.steps has no flag")

    def test_an_unknown_field_type(self):
        record = copy.deepcopy(self.record)
        record["torchtitan"]["fields"][0]["type"] = "integer"
        self.assertCaught(record, "unknown type")

    def test_no_not_seen(self):
        record = copy.deepcopy(self.record)
        record["torchtitan"]["not_seen"] = []
        self.assertCaught(record, "torchtitan.not_seen")

    def test_allow_abbrev_not_a_bool(self):
        record = copy.deepcopy(self.record)
        record["scripts"][TRAIN]["allow_abbrev"] = "no"
        self.assertCaught(record, "allow_abbrev")


FIXTURE = os.path.join(HERE, "fixtures", "mini-torchtitan")


def make_repo(parent, drop=()):
    repo = os.path.join(parent, "repo")
    shutil.copytree(FIXTURE, repo)
    for path in drop:
        os.remove(os.path.join(repo, path))
    git = ["git", "-C", repo, "-c", "user.name=fixture", "-c", "user.email=fixture@invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "fixture"], check=True)
    return repo


class MiniRepository(unittest.TestCase):
    """The extractor on fixtures/mini-torchtitan: each rule of the tyro tree it reads."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        out = os.path.join(cls.tmp, "out.json")
        done = extract(make_repo(cls.tmp), "HEAD", out)
        assert done.returncode == 0, done.stderr
        with open(out, encoding="utf-8") as f:
            cls.record = json.load(f)
        cls.fields = {f["name"]: f for f in cls.record["torchtitan"]["fields"]}
        cls.flags = {n: f for f in cls.record["scripts"][TRAIN]["flags"] for n in f["names"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_sections_and_suppressed_fields(self):
        self.assertEqual(list(self.fields), [
            "dump_folder", "dataloader.dataset", "dataloader.infinite", "training.local_batch_size",
            "training.seq_len", "training.max_norm", "training.dtype", "parallelism.tensor_parallel_degree",
            "parallelism.enable_sequence_parallel", "parallelism.layers_per_stage", "parallelism.fqns",
            "checkpoint.enable", "checkpoint.exclude_from_loading"])

    def test_registry_narrows_the_dataloader(self):
        """The registries build TextDataLoader.Config: its fields and default, not the base class's."""
        self.assertEqual(self.fields["dataloader.dataset"]["default"], "c4_test")
        self.assertIn("dataloader", self.record["torchtitan"]["narrowed_by_registries"])

    def test_types(self):
        got = {n: (f["type"], f["optional"], f["default"], f["choices"]) for n, f in self.fields.items()}
        self.assertEqual(got["training.max_norm"], ("float", False, 1.0, None))
        self.assertEqual(got["training.dtype"], ("str", False, "float32", ["bfloat16", "float32"]))
        self.assertEqual(got["parallelism.layers_per_stage"], ("int", True, None, None))
        self.assertEqual(got["parallelism.fqns"], ("list[str]", False, ["a", "b"], None))
        self.assertEqual(got["checkpoint.exclude_from_loading"], ("list[str]", False, [], None))

    def test_flags(self):
        self.assertEqual(self.flags["--parallelism.layers-per-stage"]["type"], "other:int | None")
        self.assertEqual(self.flags["--parallelism.no-enable-sequence-parallel"]["action"], "store_false")
        self.assertEqual(self.flags["--parallelism.enable_sequence_parallel"]["action"], "store_true")
        self.assertTrue(self.flags["--module"]["required"])
        self.assertNotIn("--training.hidden_knob", self.flags)
        self.assertNotIn("--model_spec", self.flags)

    def test_launcher_log_and_checkpoint(self):
        titan = self.record["torchtitan"]
        self.assertEqual(titan["launcher"]["env_defaults"], {"NGPU": "8", "LOG_RANK": "0", "MODULE": "llama3",
                                                              "CONFIG": "debug"})
        self.assertEqual(titan["launcher"]["slurm_template"]["command"][:3], ["srun", "torchrun", "--nnodes"])
        self.assertEqual(titan["log"]["colors"], {"red": "\033[31m", "reset": "\033[39m"})
        pieces = self.record["log_formats"][titan["log"]["step_key"]]["pieces"]
        self.assertEqual(pieces[1:3], ["step: ", {"field": "step", "spec": "2"}])
        self.assertEqual(titan["checkpoint"]["step_dir_source"], "torchtitan/components/checkpointer/dcp.py:18")
        call = self.record["log_formats"][titan["log"]["step_key"]]["call"]
        self.assertEqual(call["arguments"], {"step": "self.step", "loss": "loss"})
        self.assertEqual(call["counted"], {"self.step": "before"})
        self.assertEqual(call["when"], ["self.metrics_processor.should_log(self.step)"])
        self.assertTrue(titan["config_selection"]["fully_qualified_module"])

    def test_a_missing_fact_is_refused(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        out = os.path.join(tmp, "out.json")
        done = extract(make_repo(tmp, drop=["torchtitan/components/metrics.py"]), "HEAD", out)
        self.assertEqual(done.returncode, 2)
        self.assertIn("torchtitan/components/metrics.py: not in", done.stderr)
        self.assertFalse(os.path.exists(out))


class Rebuilt(unittest.TestCase):
    def test_reproduced_from_the_pinned_commit(self):
        repo = os.environ.get("TRNSLURM_TORCHTITAN_REPO")
        if not repo:
            self.skipTest("TRNSLURM_TORCHTITAN_REPO (a clone of pytorch/torchtitan) not set")
        done = extract(repo, load()["commit"], RECORD, "--check")
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_missing_file_is_refused(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        git = ["git", "-C", tmp, "-c", "user.name=t", "-c", "user.email=t@t"]
        os.makedirs(os.path.join(tmp, "torchtitan"))
        with open(os.path.join(tmp, "torchtitan", "trainer.py"), "w", encoding="utf-8") as f:
            f.write("class Trainer:\n    class Config:\n        steps: int = 1\n")
        subprocess.run(git[:3] + ["init", "-q"], check=True)
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "-q", "-m", "x"], check=True)
        out = os.path.join(tmp, "out.json")
        done = extract(tmp, "HEAD", out)
        self.assertEqual(done.returncode, 2)
        self.assertIn("not in", done.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    if shutil.which("git") is None:
        print("SKIP: git is not installed; the extractor reads sources with git")
        sys.exit(77)
    unittest.main()
