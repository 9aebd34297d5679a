"""`trnslurm export --to k8s` for every bundled recipe, checked against the MPIJob CRD's schema.

Every MPIJob passes the CRD's openAPIV3Schema of kubeflow/mpi-operator 0.8.2 (the record in
interfaces/k8s/, made strict: unknown keys refused) and the rules only the operator and the API
server enforce (k8s_rules.py); each of those rules, broken once in a good MPIJob, is refused. The
MPIJobs say what docs/export.md says they say, per the instance table. run.sh, run against a
stand-in kubectl that checks every object the same way, applies the stages in order, each once
the one before succeeded, stops at a failed stage and, run again, goes on where it stopped. Run
by ctest (export.k8s_export) with TRNSLURM_BIN.
"""

import glob
import json
import os
import re
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
import k8s_rules  # noqa: E402
from k8s_rules import broken  # noqa: E402
from export_common import BIN, SOURCE, STAGE_ORDER, instance_figures, trnslurm  # noqa: E402


def export(work, *extra):
    """Exports the recipe in `work`, with a claim for each directory the first try says is shared."""
    base = ["export", "--samples", "2000000", "--to", "k8s", "--image", "registry.example/trainer:1",
            "--namespace", "training", "--runs-dir", os.path.join(work, "runs"), "--json", *extra]
    r = trnslurm(*base, cwd=work)
    m = re.search(r"no volume claim for (.*), which every pod must see", r.stderr)
    if r.returncode != 2 or not m:
        raise AssertionError(f"an export without claims: {r.returncode} {r.stderr}")
    dirs = m.group(1).split(", ")
    claims = [f"--volume-claim={d}=claim-{d.strip('/').replace('/', '-') or 'root'}" for d in dirs]
    r = trnslurm(*base, *claims, cwd=work)
    if r.returncode != 0:
        raise AssertionError(f"export failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout), dirs


class Exported(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="export-k8s-")
        names = subprocess.run([BIN, "recipes"], capture_output=True, text=True, check=True).stdout.split("\n")
        cls.recipes = {}
        cls.shared = {}
        cls.tracks = {}
        for line in filter(None, names):
            name, track = line.split()[:2]
            cls.tracks[name] = track
            work = os.path.join(cls.tmp.name, name)
            os.mkdir(work)
            subprocess.run([BIN, "init", name], cwd=work, capture_output=True, check=True)
            cls.recipes[name], cls.shared[name] = export(work)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def k8s_dir(self, name):
        return os.path.join(self.recipes[name]["run_dir"], "k8s")

    def load(self, name, stage):
        with open(os.path.join(self.k8s_dir(name), "mpijobs", f"{stage}.json")) as f:
            return json.load(f)

    def test_every_bundled_recipe_exported(self):
        sources = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(SOURCE, "recipes", "*.toml")))
        self.assertEqual(sources, sorted(self.recipes))
        self.assertIn("current", self.tracks.values())
        for name, out in self.recipes.items():
            self.assertEqual(out["to"], "k8s")
            self.assertEqual(os.path.join(self.k8s_dir(name), "run.sh"), out["submit"])
            for f in out["files"]:
                self.assertTrue(os.path.isfile(f), f"{name}: {f} listed but not written")
            self.assertEqual(out["stages"], [s for s in STAGE_ORDER if s in out["stages"]], name)

    def test_mpijobs_pass_the_crd_schema_and_the_operator(self):
        for name, out in self.recipes.items():
            for stage in out["stages"]:
                with self.subTest(recipe=name, stage=stage):
                    self.assertEqual([], k8s_rules.problems(self.load(name, stage)))

    def test_mpijobs_say_what_the_docs_say(self):
        for name, out in self.recipes.items():
            with open(os.path.join(out["run_dir"], "plan.json")) as f:
                plan = json.load(f)
            figures = instance_figures(plan["instance"])
            for stage in out["stages"]:
                with self.subTest(recipe=name, stage=stage):
                    job = self.load(name, stage)
                    spec = job["spec"]
                    self.assertEqual(f"trn-{out['chain_id']}-{stage.replace('_', '-')}", job["metadata"]["name"])
                    self.assertEqual("training", job["metadata"]["namespace"])
                    self.assertTrue(spec["runLauncherAsWorker"], "the launcher is node 0, as the Slurm batch host")
                    launcher = spec["mpiReplicaSpecs"]["Launcher"]
                    worker = spec["mpiReplicaSpecs"].get("Worker")
                    nodes = 1 + (worker["replicas"] if worker else 0)
                    with open(os.path.join(self.k8s_dir(name), "stages", f"{stage}.sh")) as f:
                        self.assertIn(f"export TRNSLURM_STAGE='{stage}'", f.read())
                    self.assertEqual("Never", launcher["restartPolicy"], "a failed launcher is a new pod: a new attempt")
                    if worker:
                        self.assertEqual("OnFailure", worker["restartPolicy"])
                    templates = [launcher["template"]] + ([worker["template"]] if worker else [])
                    for t in templates:
                        [c] = t["spec"]["containers"]
                        self.assertEqual(["/bin/bash", os.path.join(self.k8s_dir(name), "entry.sh"), stage], c["command"])
                        self.assertEqual("registry.example/trainer:1", c["image"])
                        limits = c.get("resources", {}).get("limits", {})
                        if plan["instance"] == "cpu":
                            self.assertEqual({}, limits)
                        else:
                            self.assertEqual(str(figures["devices"]), limits["aws.amazon.com/neuron"])
                            if figures.get("efa_devices"):
                                self.assertEqual(str(figures["efa_devices"]), limits["vpc.amazonaws.com/efa"])
                            else:
                                self.assertNotIn("vpc.amazonaws.com/efa", limits)
                            self.assertEqual(limits, c["resources"]["requests"])
                            self.assertEqual({"node.kubernetes.io/instance-type": plan["instance"]}, t["spec"]["nodeSelector"])
                        self.assertIn("IPC_LOCK", c["securityContext"]["capabilities"]["add"])
                        volumes = {v["name"]: v for v in t["spec"]["volumes"]}
                        mounts = {m["mountPath"]: volumes[m["name"]] for m in c["volumeMounts"]}
                        self.assertEqual("Memory", mounts["/dev/shm"]["emptyDir"]["medium"])
                        for d in self.shared[name]:
                            self.assertIn("persistentVolumeClaim", mounts[d], f"{d} on a claim")
                        self.assertIn("/" + out["run_dir"].split("/")[1], mounts, "the run directory is on a claim")
                        self.assertEqual({"name": "TRN_POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}},
                                         c["env"][0])
                    [c] = launcher["template"]["spec"]["containers"]
                    self.assertEqual({"fieldPath": "metadata.labels['batch.kubernetes.io/controller-uid']"},
                                     c["env"][1]["valueFrom"]["fieldRef"], "the launcher's Job")
                    self.assertGreaterEqual(nodes, 1)
                    policy = spec["runPolicy"]
                    if stage == "train":
                        self.assertGreaterEqual(policy["backoffLimit"], 1, "the train stage is retried on a lost node")
                    else:
                        self.assertEqual(0, policy["backoffLimit"])
                    if "activeDeadlineSeconds" in policy:
                        self.assertGreater(policy["activeDeadlineSeconds"], 0)

    def test_an_unknown_efa_count_is_not_invented(self):
        # trn3.48xlarge's EFA interfaces are not in the instance table: none requested, and said so.
        self.assertIsNone(instance_figures("trn3.48xlarge").get("efa_devices"))
        work = os.path.join(self.tmp.name, "llama31-70b-trn2")
        out, _ = export(work, "--set", "cluster.instance=trn3.48xlarge")
        self.assertTrue(any("EFA" in n and "unverified" in n for n in out["notes"]), out["notes"])
        with open(os.path.join(out["run_dir"], "k8s", "README.md")) as f:
            self.assertIn("NOT requested", f.read())
        for stage in out["stages"]:
            with open(os.path.join(out["run_dir"], "k8s", "mpijobs", f"{stage}.json")) as f:
                job = json.load(f)
            self.assertEqual([], k8s_rules.problems(job))
            limits = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["resources"]["limits"]
            self.assertEqual({"aws.amazon.com/neuron": str(instance_figures("trn3.48xlarge")["devices"])}, limits)

    def test_each_rule_broken_once_is_refused(self):
        name = next(n for n, o in self.recipes.items() if "train" in o["stages"]
                    and "Worker" in self.load(n, "train")["spec"]["mpiReplicaSpecs"])
        good = self.load(name, "train")
        self.assertEqual([], k8s_rules.problems(good))
        launcher = ("spec", "mpiReplicaSpecs", "Launcher")
        container = launcher + ("template", "spec", "containers", 0)
        last = f"-worker-{good['spec']['mpiReplicaSpecs']['Worker']['replicas'] - 1}"
        long_name = "a" * (64 - len(last))
        cases = {
            "unknown key in the spec": (("spec", "gpusPerWorker"), 8),
            "unknown key in a container": (container + ("gpus",), 8),
            "unknown key in the pod template's metadata": (launcher + ("template", "metadata", "owner"), "x"),
            "unknown key in the object's metadata": (("metadata", "uid"), "x"),
            "wrong type": (("spec", "slotsPerWorker"), "1"),
            "missing required (containers)": (launcher + ("template", "spec", "containers"), None),
            "enum value": (("spec", "mpiImplementation"), "MVAPICH"),
            "quantity pattern": (container + ("resources", "limits", "cpu"), "lots"),
            "two launchers": (launcher + ("replicas",), 2),
            "no launcher": (launcher, None),
            "a third replica type": (("spec", "mpiReplicaSpecs", "Server"), good["spec"]["mpiReplicaSpecs"]["Launcher"]),
            "zero workers": (("spec", "mpiReplicaSpecs", "Worker", "replicas"), 0),
            "restart policy Always": (launcher + ("restartPolicy",), "Always"),
            "restart policy ExitCode": (("spec", "mpiReplicaSpecs", "Worker", "restartPolicy"), "ExitCode"),
            "no replicas": (launcher + ("replicas",), None),
            "no slots per worker": (("spec", "slotsPerWorker"), None),
            "negative slots": (("spec", "slotsPerWorker"), -1),
            "no ssh mount path": (("spec", "sshAuthMountPath"), None),
            "clean pod policy": (("spec", "runPolicy", "cleanPodPolicy"), "Some"),
            "negative backoff": (("spec", "runPolicy", "backoffLimit"), -1),
            "name not a DNS-1035 label (upper case)": (("metadata", "name"), "Trn-train"),
            "name starting with a digit": (("metadata", "name"), "1trn"),
            "worker host name too long": (("metadata", "name"), long_name),
            "namespace not a label": (("metadata", "namespace"), "Training"),
            "label value": (("metadata", "labels", "trnslurm-stage"), "a b"),
            "container name": (container + ("name",), "Trainer"),
            "mount of no volume": (container + ("volumeMounts", 0, "name"), "nowhere"),
            "neuron devices not whole": (container + ("resources", "limits", "aws.amazon.com/neuron"), "1.5"),
            "requests other than limits": (container + ("resources", "requests", "aws.amazon.com/neuron"), "1"),
            "environment name": (container + ("env", 0, "name"), "1X"),
            "wrong kind": (("kind",), "PyTorchJob"),
        }
        self.assertEqual([], k8s_rules.problems(broken(good, ("metadata", "name"), long_name[1:])),
                         f"one character less leaves room for {last}")
        for what, (path, value) in cases.items():
            with self.subTest(rule=what):
                self.assertNotEqual([], k8s_rules.problems(broken(good, path, value)))

    def run_chain(self, name, log, fail=None):
        env = dict(os.environ, KUBECTL=os.path.join(HERE, "kubectl_standin.py"), KUBECTL_STANDIN_LOG=log,
                   TRNSLURM_K8S_WAIT="1s")
        env.pop("KUBECTL_STANDIN_FAIL", None)
        if fail:
            env["KUBECTL_STANDIN_FAIL"] = fail
        r = subprocess.run(["bash", os.path.join(self.k8s_dir(name), "run.sh")], env=env, capture_output=True, text=True)
        with open(log) as f:
            calls = [json.loads(line) for line in f]
        return r, calls

    def test_run_applies_each_stage_after_the_one_before_succeeded(self):
        chosen = {}
        for name, track in sorted(self.tracks.items()):
            chosen.setdefault(track, name)
        self.assertEqual({"current", "legacy"}, set(chosen))
        for name in chosen.values():
            out = self.recipes[name]
            names = [f"trn-{out['chain_id']}-{s.replace('_', '-')}" for s in out["stages"]]
            with self.subTest(recipe=name):
                log = os.path.join(self.tmp.name, f"{name}-kubectl.jsonl")
                open(log, "w").close()
                r, calls = self.run_chain(name, log)
                self.assertEqual(0, r.returncode, r.stderr)
                expected = []
                for n in names:
                    expected += [("apply", n), ("wait", n)]
                self.assertEqual(expected, [(c["call"], c["name"]) for c in calls])
                with open(os.path.join(self.k8s_dir(name), "applied")) as f:
                    self.assertEqual([f"{s} {n}" for s, n in zip(out["stages"], names)], f.read().split("\n")[:-1])

    def test_a_failed_stage_stops_the_chain_and_a_rerun_goes_on(self):
        # Not one the test above runs: run.sh appends to the run directory's applied.
        name = next(n for n in sorted(self.recipes, reverse=True) if self.recipes[n]["stages"][:3] == STAGE_ORDER[:3])
        out = self.recipes[name]
        names = [f"trn-{out['chain_id']}-{s.replace('_', '-')}" for s in out["stages"]]
        log = os.path.join(self.tmp.name, f"{name}-kubectl-fail.jsonl")
        open(log, "w").close()
        r, calls = self.run_chain(name, log, fail="precompile")
        self.assertEqual(1, r.returncode)
        self.assertIn("precompile: MPIJob", r.stderr)
        applied = [c["name"] for c in calls if c["call"] == "apply"]
        self.assertEqual(names[:2], applied, "nothing after the failed stage is applied")
        # The failure dealt with (here: the cluster now lets it succeed), run.sh again: the stages
        # that exist are applied unchanged and waited for, the rest applied.
        first = len(calls)
        r, calls = self.run_chain(name, log)
        self.assertEqual(0, r.returncode, r.stderr)
        again = [c for c in calls[first:] if c["call"] == "apply"]
        self.assertEqual(names, [c["name"] for c in again])
        self.assertEqual([False, False] + [True] * (len(names) - 2), [c["created"] for c in again])


class Refused(unittest.TestCase):
    def test_refusals_leave_nothing(self):
        with tempfile.TemporaryDirectory() as work:
            subprocess.run([BIN, "init", "tiny-cpu"], cwd=work, capture_output=True, check=True)
            runs = os.path.join(work, "runs")
            base = ["export", "--samples", "2000", "--to", "k8s", "--runs-dir", runs]
            cases = [
                (["--volume-claim", "c"], "--image"),
                (["--image", "i"], "no volume claim for"),
                (["--image", "i", "--volume-claim", "c", "--set", "checkpoint.dir=/var/tmp/trn-ckpt"], "one claim (c) for"),
                (["--image", "i", "--volume-claim", "Bad_Claim"], "not a volume claim name"),
                (["--image", "i", "--volume-claim", "c", "--namespace", "Training"], "namespace"),
                (["--image", "i", "--volume-claim", "c", "--job-queue", "q"], "are for --to aws-batch"),
            ]
            for args, text in cases:
                with self.subTest(args=args):
                    r = trnslurm(*base, *args, cwd=work)
                    self.assertEqual(2, r.returncode, r.stderr)
                    self.assertIn(text, r.stderr)
            self.assertFalse(os.path.exists(runs), "a refused export left a runs directory")


if __name__ == "__main__":
    unittest.main(verbosity=2)
