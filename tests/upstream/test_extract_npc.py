"""tools/upstream-interface/extract_npc.py refuses (exit 2, nothing written) when a page it reads
is missing or no longer holds a fact's anchor; the committed record itself is checked by
test_records.py."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

import extract_npc  # noqa: E402
from test_extract import git  # noqa: E402

PAGES = [extract_npc.NPC, extract_npc.ENVVARS, extract_npc.CACHING, extract_npc.HFTRAINER, extract_npc.PROFILING]


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="trnslurm-npc-")
        self.repo = os.path.join(self.tmp, "docs")
        self.out = os.path.join(self.tmp, "npc.json")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def commit(self, pages):
        for path in pages:
            os.makedirs(os.path.dirname(os.path.join(self.repo, path)), exist_ok=True)
            with open(os.path.join(self.repo, path), "w", encoding="utf-8") as f:
                f.write("A page that says nothing about the tool.\n")
        git(self.repo, "init", "-q")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "pages")

    def run_extractor(self):
        argv = [sys.executable, os.path.join(ROOT, "tools", "upstream-interface", "extract_npc.py"),
                "--repo", self.repo, "--rev", "HEAD", "--release", "0.1", "--out", self.out]
        return subprocess.run(argv, capture_output=True, text=True)

    def assertRefused(self, done, message):
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn(message, done.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_missing_page(self):
        self.commit(PAGES[:-1])
        self.assertRefused(self.run_extractor(), f"{extract_npc.PROFILING}: not in")

    def test_page_without_the_anchor(self):
        self.commit(PAGES)
        self.assertRefused(self.run_extractor(), f"{extract_npc.NPC}: usage examples not found: the page changed")


if __name__ == "__main__":
    if shutil.which("git") is None:
        print("SKIP: git is not installed; the extractor reads sources with git")
        sys.exit(77)
    unittest.main(verbosity=2)
