"""tools/upstream-interface/extract.py on a small repository made from fixtures/mini: every
fact of the record, field by field, and the refusals (nothing written, exit 2)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXTRACT = os.path.join(ROOT, "tools", "upstream-interface", "extract.py")
FIXTURE = os.path.join(HERE, "fixtures", "mini")

TRAIN = "examples/train/train.py"
CONVERT = "examples/convert.py"
LAUNCH = "examples/train/launch.sh"
WRAP = "examples/train/wrap.sh"
LOGGER = "examples/train/logger.py"


def git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.name=fixture", "-c", "user.email=fixture@invalid",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


def make_repo(parent):
    repo = os.path.join(parent, "repo")
    shutil.copytree(FIXTURE, repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    git(repo, "tag", "v1.0")
    return repo


class ExtractRun:
    def __init__(self, tmp):
        self.tmp = tmp
        self.repo = make_repo(tmp)
        self.out = os.path.join(tmp, "record.json")

    def run(self, *extra, scripts=(TRAIN, CONVERT), launchers=("examples/train/*.sh",),
            logs=(LOGGER + ":Logger.log", LOGGER + ":train:epoch_end:Epoch {} step"),
            log_calls=(f"{LOGGER}:{LOGGER}:loop",)):
        argv = [sys.executable, EXTRACT, "--repo", self.repo, "--rev", "v1.0", "--release", "1.0",
                "--package", "mini", "--repository", "https://example.invalid/mini", "--out", self.out]
        argv += [a for s in scripts for a in ("--script", s)]
        argv += [a for s in launchers for a in ("--launcher", s)]
        argv += [a for s in logs for a in ("--log", s)]
        argv += [a for s in log_calls for a in ("--log-call", s)]
        return subprocess.run(argv + list(extra), capture_output=True, text=True)


class ExtractedRecord(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="trnslurm-upstream-")
        cls.run_ = ExtractRun(cls.tmp)
        done = cls.run_.run()
        if done.returncode != 0:
            raise AssertionError(f"extract.py failed: {done.stderr}")
        with open(cls.run_.out, encoding="utf-8") as f:
            cls.text = f.read()
        cls.record = json.loads(cls.text)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def flag(self, script, name):
        flags = [f for f in self.record["scripts"][script]["flags"] if name in f["names"]]
        self.assertEqual(len(flags), 1, name)
        return flags[0]

    def test_header(self):
        head = subprocess.run(["git", "-C", self.run_.repo, "rev-parse", "HEAD"], capture_output=True, text=True)
        self.assertEqual(self.record["commit"], head.stdout.strip())
        self.assertEqual(self.record["format"], 1)
        self.assertEqual(self.record["package"], "mini")
        self.assertEqual(self.record["release"], "1.0")
        self.assertEqual(self.record["repository"], "https://example.invalid/mini")
        self.assertEqual(self.record["extracted_by"], "tools/upstream-interface/extract.py")

    def test_strict_parser_in_the_script(self):
        script = self.record["scripts"][TRAIN]
        self.assertEqual(script["parse"], "strict")
        self.assertEqual(script["parser"], TRAIN)
        self.assertEqual([f["names"] for f in script["flags"]],
                         [["--batch_size"], ["--lr"], ["--use_zero_1"], ["--pretrained_weight"], ["--mode"],
                          ["--layers"], ["--name"], ["--out-dir"], ["--fuse_qkv"], ["-v", "--verbose"], ["input"],
                          ["--beta1"], ["--steps"]])

    def test_value_flags(self):
        self.assertEqual(self.flag(TRAIN, "--batch_size"), {
            "names": ["--batch_size"], "dest": "batch_size", "action": "store", "type": "int",
            "required": False, "default": 8, "nargs": None, "choices": None})
        self.assertEqual(self.flag(TRAIN, "--lr")["type"], "float")
        self.assertEqual(self.flag(TRAIN, "--lr")["default"], 0.0004)
        self.assertEqual(self.flag(TRAIN, "--name")["required"], True)
        self.assertEqual(self.flag(TRAIN, "--name")["type"], "str")

    def test_switches(self):
        zero1 = self.flag(TRAIN, "--use_zero_1")
        self.assertEqual((zero1["action"], zero1["default"], zero1["type"]), ("store_true", None, None))
        weight = self.flag(TRAIN, "--pretrained_weight")
        self.assertEqual((weight["action"], weight["default"]), ("store_true", False))
        verbose = self.flag(TRAIN, "--verbose")
        self.assertEqual((verbose["action"], verbose["dest"], verbose["default"]), ("count", "verbose", 0))

    def test_type_bool_is_recorded_as_bool(self):
        fuse = self.flag(TRAIN, "--fuse_qkv")
        self.assertEqual((fuse["type"], fuse["action"], fuse["default"]), ("bool", "store", False))

    def test_nargs_choices_and_non_literal_default(self):
        self.assertEqual(self.flag(TRAIN, "--layers")["nargs"], "+")
        self.assertEqual(self.flag(TRAIN, "--mode")["choices"], ["fast", "slow"])
        out_dir = self.flag(TRAIN, "--out-dir")
        self.assertEqual(out_dir["default"], {"expr": "os.path.join('a', 'b')"})
        self.assertEqual(out_dir["dest"], "out_dir")

    def test_positional_and_group_and_dest(self):
        positional = self.flag(TRAIN, "input")
        self.assertEqual((positional["dest"], positional["nargs"]), ("input", "?"))
        self.assertEqual(self.flag(TRAIN, "--beta1")["default"], 0.9)
        self.assertEqual(self.flag(TRAIN, "--steps")["dest"], "max_steps")
        self.assertEqual(self.flag(TRAIN, "--steps")["default"], -1)

    def test_known_parser_built_in_another_file(self):
        script = self.record["scripts"][CONVERT]
        self.assertEqual(script["parse"], "known")
        self.assertEqual(script["parser"], "src/pkg/conv.py")
        self.assertEqual([f["names"][0] for f in script["flags"]], ["--hw_backend", "--tp_size", "--dry_run"])
        self.assertTrue(self.flag(CONVERT, "--hw_backend")["required"])
        self.assertEqual(self.flag(CONVERT, "--dry_run")["action"], "store_true")

    def test_no_help_text_is_copied(self):
        self.assertNotIn("not recorded", self.text)

    def test_launcher_args_paired_by_the_parser(self):
        launcher = self.record["launchers"][LAUNCH]
        self.assertEqual(launcher["runs"], TRAIN)
        self.assertEqual(launcher["args"], [
            {"flag": "--batch_size", "value": "$MBS"},
            {"flag": "--name", "value": '"run ${TP_DEGREE}"'},
            {"flag": "--steps", "value": "$STEPS"},
            {"flag": "--pretrained_weight", "value": None},
            {"flag": "--layers", "value": ["1", "2"]},
            {"flag": "--lr", "value": "1e-3"},
            {"flag": "--unknown_flag", "value": "5", "unknown_to_script": True},
            {"flag": "--use_zero_1", "value": None, "conditional": True,
             "when": [{"test": "[ $USE_ZERO_1 -gt 0 ]", "holds": True}]},
        ])

    def test_launcher_env_and_settings(self):
        launcher = self.record["launchers"][LAUNCH]
        self.assertEqual(launcher["env"], {
            "MALLOC_ARENA_MAX": "64", "NEURON_CC_FLAGS": '"--model-type transformer --cache_dir=$HOME/cache/"'})
        self.assertEqual(launcher["settings"]["TP_DEGREE"], "8")
        self.assertEqual(launcher["settings"]["MBS"], "1")
        self.assertEqual(launcher["settings"]["EXTRA_ARGS"], '" "')
        self.assertNotIn("STEPS", launcher["settings"])
        self.assertEqual(launcher["conditional_env"], [
            {"name": "FI_PROVIDER", "value": "efa", "when": [{"test": "[ -v SLURM_NTASKS ]", "holds": True}]}])
        slurm, other = {"test": "[ -v SLURM_NTASKS ]"}, {"test": "[ -v OTHER ]"}
        self.assertEqual(launcher["conditional_settings"], [
            {"name": "STEPS", "value": "2", "when": [dict(slurm, holds=True)]},
            {"name": "STEPS", "value": "3", "when": [dict(slurm, holds=False), dict(other, holds=True)]},
            {"name": "STEPS", "value": "-1", "when": [dict(slurm, holds=False), dict(other, holds=False)]},
        ])

    def test_wrapper_launcher(self):
        self.assertEqual(self.record["launchers"][WRAP], {
            "runs": LAUNCH, "args": [], "env": {"CONFIG_VERSION": '"3.1"'}, "settings": {},
            "conditional_env": [], "conditional_settings": []})

    def test_log_formats(self):
        self.assertEqual(self.record["log_formats"][LOGGER], {"function": "Logger.log", "pieces": [
            "LOG ", {"field": "step"}, " loss ", {"field": "loss", "spec": ".4f"}, " note ",
            {"field": "msg", "conversion": "r"}], "call": {
                "path": LOGGER, "function": "loop", "arguments": {"step": "step", "loss": "loss", "msg": "'ok'"},
                "when": ["step % 2 == 0", "step > 0"], "counted": {"step": "after"}}})
        self.assertEqual(self.record["log_formats"][LOGGER + "#epoch_end"], {"function": "train", "pieces": [
            "Epoch ", {"field": "epoch"}, " step ", {"field": "step"}, " end ", {"field": "'x'", "spec": ">5"}]})

    def test_output_is_deterministic(self):
        again = self.run_.run("--check")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(list(self.record), sorted(self.record))


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="trnslurm-upstream-")
        self.run_ = ExtractRun(self.tmp)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def assertRefused(self, done, message):
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn(message, done.stderr)
        self.assertIn("nothing written", done.stderr)
        self.assertFalse(os.path.exists(self.run_.out))

    def test_missing_script(self):
        done = self.run_.run(scripts=(TRAIN, "examples/gone.py"))
        self.assertRefused(done, "examples/gone.py: not in")

    def test_missing_launcher_pattern(self):
        done = self.run_.run(launchers=("examples/none/*.sh",))
        self.assertRefused(done, "examples/none/*.sh: no file matches")

    def test_script_without_parser(self):
        done = self.run_.run(scripts=(TRAIN, CONVERT, "examples/noparser.py"))
        self.assertRefused(done, "examples/noparser.py: no parse_args/parse_known_args call")

    def test_launcher_running_an_unrecorded_script(self):
        done = self.run_.run(scripts=(CONVERT,))
        self.assertRefused(done, "runs examples/train/train.py, which is not among the recorded scripts")

    def test_unknown_revision(self):
        done = self.run_.run("--rev", "v9.9")
        self.assertRefused(done, "revision 'v9.9' not found")

    def test_log_line_not_found(self):
        done = self.run_.run(logs=(LOGGER + ":train:x:Nothing like this",))
        self.assertRefused(done, "0 printed lines starting 'Nothing like this' in train")

    def test_check_reports_a_stale_record(self):
        self.assertEqual(self.run_.run().returncode, 0)
        with open(self.run_.out, "a", encoding="utf-8") as f:
            f.write(" ")
        done = self.run_.run("--check")
        self.assertEqual(done.returncode, 1)
        self.assertIn("differs", done.stderr)


    def test_call_of_an_unrecorded_line(self):
        done = self.run_.run(log_calls=(f"examples/other.py:{LOGGER}:loop",))
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("is not a recorded --log line", done.stderr)
        self.assertFalse(os.path.exists(self.run_.out))

    def test_function_without_the_call(self):
        done = self.run_.run(log_calls=(f"{LOGGER}:{LOGGER}:train",))
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("0 calls of log in train", done.stderr)

    def test_malformed_spec(self):
        done = self.run_.run(log_calls=("only:two",))
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("expected LOGPATH:PATH:FUNCTION", done.stderr)

if __name__ == "__main__":
    if shutil.which("git") is None:
        print("SKIP: git is not installed; the extractor reads sources with git")
        sys.exit(77)
    unittest.main(verbosity=2)
