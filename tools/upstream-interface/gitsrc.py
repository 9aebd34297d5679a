"""Reads files of one revision of a git repository (`git show REV:PATH`), never the work tree."""

import fnmatch
import subprocess


class ExtractError(Exception):
    """A fact could not be read: the record is not written."""


class GitSource:
    def __init__(self, repo, rev):
        self.repo = repo
        self.rev = rev
        self.commit = self._git("rev-parse", "--verify", "--quiet", rev + "^{commit}",
                                what=f"revision {rev!r} not found in {repo}").strip()
        self._paths = None
        self._cache = {}

    def _git(self, *args, what):
        try:
            done = subprocess.run(["git", "-C", self.repo, *args], capture_output=True, check=False)
        except OSError as e:
            raise ExtractError(f"cannot run git: {e}") from e
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip()
            raise ExtractError(what + (f" ({detail})" if detail else ""))
        return done.stdout.decode("utf-8")

    def paths(self):
        if self._paths is None:
            out = self._git("ls-tree", "-r", "--name-only", "-z", self.commit,
                            what=f"cannot list the files of {self.rev}")
            self._paths = sorted(p for p in out.split("\0") if p)
        return self._paths

    def exists(self, path):
        return path in set(self.paths())

    def glob(self, pattern):
        """Paths matching a shell pattern whose `*` stays inside one directory."""
        depth = pattern.count("/")
        return [p for p in self.paths() if p.count("/") == depth and fnmatch.fnmatchcase(p, pattern)]

    def read(self, path):
        if path not in self._cache:
            if not self.exists(path):
                raise ExtractError(f"{path}: not in {self.repo} at {self.rev} ({self.commit[:12]})")
            self._cache[path] = self._git("show", f"{self.commit}:{path}", what=f"cannot read {path} at {self.rev}")
        return self._cache[path]
