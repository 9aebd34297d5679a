"""tools/upstream-interface/extract_crd.py: on a small repository holding a CRD manifest it keeps
the schema's facts and drops its descriptions (not a property named 'description'), checks
(--check) and refuses (exit 2, nothing written) a manifest or version that is not there; given a
clone of kubeflow/mpi-operator in TRNSLURM_MPI_OPERATOR_REPO, it gives the committed record again
byte for byte (skipped without one). The committed record's header is checked here too."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

from test_extract import git  # noqa: E402

TOOL = os.path.join(ROOT, "tools", "upstream-interface", "extract_crd.py")
RECORD = os.path.join(ROOT, "interfaces", "k8s", "mpi-operator-0.8.2.json")
MANIFEST = """---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.org
spec:
  group: example.org
  names:
    kind: Thing
    plural: things
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        description: A thing, in prose.
        properties:
          spec:
            description: What it is.
            properties:
              description:
                description: The thing's own description field.
                type: string
              size:
                anyOf:
                - type: integer
                - type: string
                x-kubernetes-int-or-string: true
              mode:
                enum: [A, B]
                type: string
            required: [mode]
            type: object
        type: object
"""


def extract(repo, rev, out, *extra):
    argv = [sys.executable, TOOL, "--repo", repo, "--rev", rev, "--release", "1.0", "--out", out, *extra]
    return subprocess.run(argv, capture_output=True, text=True)


class OnASmallRepository(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="trnslurm-crd-")
        self.repo = os.path.join(self.tmp, "src")
        self.out = os.path.join(self.tmp, "thing.json")
        path = os.path.join(self.repo, "crd.yaml")
        os.makedirs(self.repo)
        with open(path, "w", encoding="utf-8") as f:
            f.write(MANIFEST)
        git(self.repo, "init", "-q")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "crd")
        self.args = ["--manifest", "crd.yaml", "--version", "v1", "--package", "things",
                     "--repository", "https://example.org/things"]

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_facts_without_prose(self):
        done = extract(self.repo, "HEAD", self.out, *self.args)
        self.assertEqual(0, done.returncode, done.stderr)
        with open(self.out, encoding="utf-8") as f:
            record = json.load(f)
        self.assertEqual({"kind": "Thing", "group": "example.org", "version": "v1", "scope": "Namespaced"},
                         {k: record["crd"][k] for k in ("kind", "group", "version", "scope")})
        spec = record["schema"]["properties"]["spec"]
        self.assertNotIn("description", record["schema"])
        self.assertEqual({"type": "string"}, spec["properties"]["description"], "a property named description is kept")
        self.assertEqual(["A", "B"], spec["properties"]["mode"]["enum"])
        self.assertEqual(["mode"], spec["required"])
        self.assertTrue(spec["properties"]["size"]["x-kubernetes-int-or-string"])
        self.assertRegex(record["commit"], "^[0-9a-f]{40}$")
        self.assertEqual(0, extract(self.repo, "HEAD", self.out, "--check", *self.args).returncode)
        with open(self.out, "a", encoding="utf-8") as f:
            f.write(" ")
        self.assertEqual(1, extract(self.repo, "HEAD", self.out, "--check", *self.args).returncode)

    def test_refusals(self):
        for args, text in [(["--manifest", "nope.yaml"], "nope.yaml: not in"), (["--version", "v9"], "no version v9")]:
            with self.subTest(args=args):
                done = extract(self.repo, "HEAD", self.out, *self.args, *args)
                self.assertEqual(2, done.returncode, done.stderr)
                self.assertIn(text, done.stderr)
                self.assertFalse(os.path.exists(self.out))


class CommittedRecord(unittest.TestCase):
    def test_header(self):
        with open(RECORD, encoding="utf-8") as f:
            text = f.read()
        record = json.loads(text)
        self.assertEqual(text, json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        self.assertRegex(record["commit"], "^[0-9a-f]{40}$")
        self.assertEqual(("mpi-operator", "0.8.2", "https://github.com/kubeflow/mpi-operator"),
                         (record["package"], record["release"], record["repository"]))
        self.assertEqual("tools/upstream-interface/extract_crd.py", record["extracted_by"])
        self.assertEqual(("kubeflow.org", "MPIJob", "v2beta1"),
                         (record["crd"]["group"], record["crd"]["kind"], record["crd"]["version"]))
        # No prose: a description survives only as a property's name.
        self.assertFalse(re.search(r'"description": "', text))

    @unittest.skipUnless(os.environ.get("TRNSLURM_MPI_OPERATOR_REPO"), "no clone of kubeflow/mpi-operator given")
    def test_regenerated_byte_for_byte(self):
        with open(RECORD, encoding="utf-8") as f:
            commit = json.load(f)["commit"]
        done = extract(os.environ["TRNSLURM_MPI_OPERATOR_REPO"], commit, RECORD, "--check", "--release", "0.8.2")
        self.assertEqual(0, done.returncode, done.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
