"""tools/upstream-interface/extract_nccom.py: it refuses (exit 2, nothing written) when the guide
is missing or no longer holds a fact's anchor, and, given a clone of aws-neuron/aws-neuron-sdk in
TRNSLURM_NEURON_SDK_REPO, it gives the committed record again byte for byte (skipped without
one). The committed record's shape is checked by test_records.py."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

import extract_nccom  # noqa: E402
from test_extract import git  # noqa: E402

TOOL = os.path.join(ROOT, "tools", "upstream-interface", "extract_nccom.py")
RECORD = os.path.join(ROOT, "interfaces", "nccom-test-2.29.json")


def extract(repo, rev, out, *extra):
    argv = [sys.executable, TOOL, "--repo", repo, "--rev", rev, "--release", "2.29", "--out", out, *extra]
    return subprocess.run(argv, capture_output=True, text=True)


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="trnslurm-nccom-")
        self.repo = os.path.join(self.tmp, "docs")
        self.out = os.path.join(self.tmp, "nccom.json")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def commit(self, path, text):
        os.makedirs(os.path.dirname(os.path.join(self.repo, path)), exist_ok=True)
        with open(os.path.join(self.repo, path), "w", encoding="utf-8") as f:
            f.write(text)
        git(self.repo, "init", "-q")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "pages")

    def assertRefused(self, done, message):
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn(message, done.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_missing_guide(self):
        self.commit("tools/other.rst", "Another page.\n")
        self.assertRefused(extract(self.repo, "HEAD", self.out), f"{extract_nccom.GUIDE}: not in")

    def test_guide_without_the_anchors(self):
        self.commit(extract_nccom.GUIDE, "A page that says nothing about the tool.\n")
        self.assertRefused(extract(self.repo, "HEAD", self.out), f"{extract_nccom.GUIDE}: the first example not found")


class CommittedRecord(unittest.TestCase):
    def setUp(self):
        with open(RECORD, encoding="utf-8") as f:
            self.record = json.load(f)

    def test_reproduced_from_the_pinned_revision(self):
        repo = os.environ.get("TRNSLURM_NEURON_SDK_REPO")
        if not repo:
            self.skipTest("TRNSLURM_NEURON_SDK_REPO (a clone of aws-neuron/aws-neuron-sdk) not set")
        done = extract(repo, self.record["commit"], RECORD, "--check")
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_the_facts_the_check_relies_on(self):
        tool = self.record["tool"]
        flags = {n: f for f in tool["flags"] for n in f["names"]}
        self.assertEqual(flags["-r"]["required"], True)
        self.assertEqual((flags["-N"]["default"], flags["-b"]["default"], flags["-e"]["default"]), ("1", "32M", "32M"))
        self.assertEqual(flags["--hosts"]["nargs"], "+")
        self.assertIn("fp32", flags["-d"]["choices"])
        self.assertEqual(tool["operations"][0]["names"], ["all_reduce", "allr"])
        self.assertEqual(tool["multi_node"]["mpi"]["environment"]["name"], "NEURON_RT_ROOT_COMM_ID")
        self.assertEqual(tool["output"]["average_line"]["label"], "Avg bus bandwidth")
        self.assertEqual(tool["bus_bandwidth"]["factors"][0], {"operation": "All-Reduce", "factor": "(2 * (r-1)) / r"})


if __name__ == "__main__":
    if shutil.which("git") is None:
        print("SKIP: git is not installed; the extractor reads sources with git")
        sys.exit(77)
    unittest.main(verbosity=2)
