"""`trnslurm export --to aws-batch` for every bundled recipe, checked against AWS Batch's model.

Every job definition and submission request passes botocore's ParamValidator on Debian's Batch
service model plus the limits it skips (batch_rules.py); each of those rules, broken once in a
good request, is refused. The job definitions say what docs/export.md says they say, per the
instance table. submit.sh, run against a stand-in aws CLI that checks every request the same way,
registers and submits the stages in order, each depending on the one before, and terminates what
it submitted when a later submission fails. Run by ctest (export.batch) with TRNSLURM_BIN.
"""

import copy
import glob
import json
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
import batch_rules  # noqa: E402
from export_common import BIN, SOURCE, STAGE_ORDER, instance_figures, trnslurm  # noqa: E402


class Exported(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="export-batch-")
        names = subprocess.run([BIN, "recipes"], capture_output=True, text=True, check=True).stdout.split("\n")
        cls.recipes = {}
        cls.tracks = {}
        for line in filter(None, names):
            name, track = line.split()[:2]
            cls.tracks[name] = track
            work = os.path.join(cls.tmp.name, name)
            os.mkdir(work)
            subprocess.run([BIN, "init", name], cwd=work, capture_output=True, check=True)
            # The cpu type of the local test recipes has no vCPU or memory figure: given here.
            with open(os.path.join(work, "trnslurm.toml")) as f:
                cpu = 'instance = "cpu"' in f.read()
            sizes = ["--vcpus", "2", "--memory-mib", "4096"] if cpu else []
            r = trnslurm("export", "--samples", "2000000", "--to", "aws-batch", "--image",
                         "123456789012.dkr.ecr.us-east-1.amazonaws.com/trainer:1", "--job-queue", "trn-queue",
                         "--runs-dir", os.path.join(work, "runs"), "--json", *sizes, cwd=work)
            if r.returncode != 0:
                raise AssertionError(f"{name}: export failed ({r.returncode}): {r.stderr}")
            cls.recipes[name] = json.loads(r.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def batch_dir(self, name):
        return os.path.join(self.recipes[name]["run_dir"], "aws-batch")

    def load(self, name, kind, stage):
        with open(os.path.join(self.batch_dir(name), kind, f"{stage}.json")) as f:
            return json.load(f)

    def test_every_bundled_recipe_exported(self):
        sources = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(SOURCE, "recipes", "*.toml")))
        self.assertEqual(sources, sorted(self.recipes))
        self.assertIn("current", self.tracks.values())  # the TorchTitan recipes are among them
        for name, out in self.recipes.items():
            self.assertEqual(out["to"], "aws-batch")
            for f in out["files"]:
                self.assertTrue(os.path.isfile(f), f"{name}: {f} listed but not written")
            self.assertEqual(out["stages"], [s for s in STAGE_ORDER if s in out["stages"]], name)

    def test_requests_pass_the_service_model(self):
        for name, out in self.recipes.items():
            previous = None
            for stage in out["stages"]:
                with self.subTest(recipe=name, stage=stage):
                    definition = self.load(name, "job-definitions", stage)
                    self.assertEqual([], batch_rules.problems("RegisterJobDefinition", definition))
                    request = self.load(name, "submit-requests", stage)
                    if previous:
                        request["dependsOn"] = [{"jobId": previous}]
                    self.assertEqual([], batch_rules.problems("SubmitJob", request))
                    previous = f"job-of-{stage}"

    def test_job_definitions_say_what_the_docs_say(self):
        for name, out in self.recipes.items():
            with open(os.path.join(out["run_dir"], "plan.json")) as f:
                plan = json.load(f)
            figures = instance_figures(plan["instance"])
            for stage in out["stages"]:
                with self.subTest(recipe=name, stage=stage):
                    d = self.load(name, "job-definitions", stage)
                    self.assertEqual("multinode", d["type"])
                    nodes = d["nodeProperties"]
                    self.assertEqual(0, nodes["mainNode"])
                    [group] = nodes["nodeRangeProperties"]
                    self.assertEqual("0:", group["targetNodes"], "an open range, so numNodes can be overridden")
                    c = group["container"]
                    self.assertEqual(["/bin/bash", os.path.join(self.batch_dir(name), "entry.sh"), stage], c["command"])
                    self.assertEqual(plan["instance"], c["instanceType"])
                    paths = [dev["hostPath"] for dev in c["linuxParameters"].get("devices", [])]
                    neuron = 0 if plan["instance"] == "cpu" else figures["devices"]
                    efa = 0 if plan["instance"] == "cpu" else figures.get("efa_devices")
                    if efa is None:  # unknown in the instance table: none mapped, and said so
                        efa = 0
                        self.assertTrue(any("EFA" in n for n in out["notes"]), f"{name}: {out['notes']}")
                    self.assertEqual([f"/dev/neuron{i}" for i in range(neuron)] +
                                     [f"/dev/infiniband/uverbs{i}" for i in range(efa)], paths)
                    self.assertIn({"name": "memlock", "softLimit": -1, "hardLimit": -1}, c["ulimits"])
                    self.assertGreater(c["linuxParameters"]["sharedMemorySize"], 0)
                    mounted = [m["containerPath"] for m in c["mountPoints"]]
                    self.assertIn("/" + out["run_dir"].split("/")[1], mounted, "the run directory is on a mount")
                    self.assertEqual(sorted(v["name"] for v in c["volumes"]), sorted(m["sourceVolume"] for m in c["mountPoints"]))
                    if stage == "train":
                        retry = d["retryStrategy"]
                        self.assertEqual([{"onExitCode": "75", "action": "RETRY"}, {"onExitCode": "*", "action": "EXIT"}],
                                         retry["evaluateOnExit"])
                        self.assertGreaterEqual(retry["attempts"], 2)
                    else:
                        self.assertNotIn("retryStrategy", d)

    def test_each_rule_broken_once_is_refused(self):
        name = next(n for n, o in self.recipes.items() if "train" in o["stages"])
        good = self.load(name, "job-definitions", "train")
        self.assertEqual([], batch_rules.problems("RegisterJobDefinition", good))
        container = ("nodeProperties", "nodeRangeProperties", 0, "container")

        def broken(path, value):
            d = copy.deepcopy(good)
            at = d
            for key in path[:-1]:
                at = at[key]
            if value is None:
                del at[path[-1]]
            else:
                at[path[-1]] = value
            return d

        cases = {
            "unknown key": broken(container + ("gpus",), 8),
            "wrong type": broken(("nodeProperties", "numNodes"), "2"),
            "missing required": broken(("type",), None),
            "enum value": broken(("type",), "parallel"),
            "enum in a list": broken(("retryStrategy", "evaluateOnExit", 0, "action"), "RESTART"),
            "attempts above 10": broken(("retryStrategy", "attempts"), 11),
            "attempts below 1": broken(("retryStrategy", "attempts"), 0),
            "six exit rules": broken(("retryStrategy", "evaluateOnExit"), [{"onExitCode": str(i), "action": "EXIT"} for i in range(6)]),
            "exit code not digits": broken(("retryStrategy", "evaluateOnExit", 0, "onExitCode"), "Host*"),
            "timeout under 60": broken(("timeout",), {"attemptDurationSeconds": 59}),
            "main node not below numNodes": broken(("nodeProperties", "mainNode"), good["nodeProperties"]["numNodes"]),
        }
        for what, params in cases.items():
            with self.subTest(rule=what):
                self.assertNotEqual([], batch_rules.problems("RegisterJobDefinition", params))
        request = self.load(name, "submit-requests", "train")
        request["dependsOn"] = [{"jobId": f"j{i}"} for i in range(21)]
        self.assertNotEqual([], batch_rules.problems("SubmitJob", request), "21 dependencies")
        request["dependsOn"] = request["dependsOn"][:20]
        self.assertEqual([], batch_rules.problems("SubmitJob", request))

    def run_submit(self, name, fail_submit=None):
        log = os.path.join(self.tmp.name, f"{name}-aws-{fail_submit}.jsonl")
        open(log, "w").close()
        env = dict(os.environ, AWS=os.path.join(HERE, "aws_standin.py"), AWS_STANDIN_LOG=log)
        if fail_submit:
            env["AWS_STANDIN_FAIL_SUBMIT"] = str(fail_submit)
        r = subprocess.run(["bash", os.path.join(self.batch_dir(name), "submit.sh")], env=env,
                           capture_output=True, text=True)
        with open(log) as f:
            calls = [json.loads(line) for line in f]
        return r, calls

    def test_submit_chains_the_stages_with_depends_on(self):
        # One recipe of each track (every aws call starts a Python that loads botocore's model):
        # submit.sh is the same text for every recipe but its stage list.
        chosen = {}
        for name, track in sorted(self.tracks.items()):
            chosen.setdefault(track, name)
        self.assertEqual({"current", "legacy"}, set(chosen))
        for name in chosen.values():
            out = self.recipes[name]
            with self.subTest(recipe=name):
                r, calls = self.run_submit(name)
                self.assertEqual(0, r.returncode, r.stderr)
                registered = [c["params"]["jobDefinitionName"] for c in calls if c["call"] == "register-job-definition"]
                submits = [c for c in calls if c["call"] == "submit-job"]
                self.assertEqual([f"trn-{out['chain_id']}-{s}" for s in out["stages"]], registered)
                self.assertEqual(len(out["stages"]), len(submits))
                self.assertNotIn("dependsOn", submits[0]["params"])
                for before, after in zip(submits, submits[1:]):
                    self.assertEqual([{"jobId": before["jobId"]}], after["params"]["dependsOn"])
                    self.assertTrue(after["params"]["jobDefinition"].startswith("arn:aws:batch:"))
                with open(os.path.join(self.batch_dir(name), "job-ids")) as f:
                    self.assertEqual([f"{s} {c['jobId']}" for s, c in zip(out["stages"], submits)], f.read().split("\n")[:-1])

    def test_a_failed_submission_terminates_what_was_submitted(self):
        name = next(n for n, o in self.recipes.items() if len(o["stages"]) >= 3)
        r, calls = self.run_submit(name, fail_submit=2)
        self.assertNotEqual(0, r.returncode)
        submitted = [c["jobId"] for c in calls if c["call"] == "submit-job"]
        terminated = [c["jobId"] for c in calls if c["call"] == "terminate-job"]
        self.assertEqual(1, len(submitted))
        self.assertEqual(submitted, terminated)


class Refused(unittest.TestCase):
    def test_refusals_leave_nothing(self):
        with tempfile.TemporaryDirectory() as work:
            subprocess.run([BIN, "init", "tiny-cpu"], cwd=work, capture_output=True, check=True)
            runs = os.path.join(work, "runs")
            base = ["export", "--samples", "2000", "--to", "aws-batch", "--runs-dir", runs, "--vcpus", "2",
                    "--memory-mib", "4096"]
            r = trnslurm(*base, "--job-queue", "q", cwd=work)
            self.assertEqual(2, r.returncode)
            self.assertIn("--image", r.stderr)
            r = trnslurm(*base, "--image", "i", "--job-queue", "q", "--set", "stages.convert.time=00:00:30", cwd=work)
            self.assertEqual(2, r.returncode)
            self.assertIn("at least 60 s", r.stderr)
            self.assertFalse(os.path.exists(runs), "a refused export left a runs directory")


if __name__ == "__main__":
    unittest.main(verbosity=2)
