"""The nccom-test stand-in (scripts/cpu/nccom-test): its flags are those of the interface record
(interfaces/nccom-test-2.29.json), it refuses what is wrong as an argument parser does (exit 2),
and a one-node run prints the table and the average line nccom-test prints, which trnslurm's
reader (core/src/health/collective.cpp) takes. The multi-node run is tested on the local cluster
(tests/cluster/health.sh)."""

import json
import os
import subprocess
import unittest
from pathlib import Path

SOURCE = Path(os.environ.get("TRNSLURM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
STANDIN = SOURCE / "scripts" / "cpu" / "nccom-test"
RECORD = SOURCE / "interfaces" / "nccom-test-2.29.json"


def run(*args, env=None):
    return subprocess.run([str(STANDIN), *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))


def load_standin():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("nccom_standin", str(STANDIN))
    spec = importlib.util.spec_from_loader("nccom_standin", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class Flags(unittest.TestCase):
    def test_every_recorded_flag_and_operation_is_taken(self):
        record = json.loads(RECORD.read_text(encoding="utf-8"))["tool"]
        parser = load_standin().build_parser()
        known = {s for action in parser._actions for s in action.option_strings}
        for flag in record["flags"]:
            for name in flag["names"]:
                self.assertIn(name, known, f"the stand-in lacks {name}")
        standin_flags = {s for s in known if s not in ("-h", "--help")}
        recorded = {n for f in record["flags"] for n in f["names"]}
        self.assertEqual(standin_flags - recorded, set(), "the stand-in takes flags the record does not have")
        operations = [n for op in record["operations"] for n in op["names"]]
        positional = next(a for a in parser._actions if not a.option_strings and a.dest == "operation")
        self.assertEqual(sorted(positional.choices), sorted(operations))
        defaults = {f["names"][-1]: f["default"] for f in record["flags"]}
        self.assertEqual((defaults["--minbytes"], defaults["--iters"], defaults["--warmup_iters"],
                          defaults["--datatype"]), ("32M", "20", "5", "uint8"))
        a = parser.parse_args(["-r", "2", "allr"])
        self.assertEqual((a.minbytes, a.maxbytes, a.iters, a.warmup_iters, a.datatype), (32 << 20, 32 << 20, 20, 5, "uint8"))


class Refusals(unittest.TestCase):
    def assertRefused(self, done, message):
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn(message, done.stderr)
        self.assertEqual(done.stdout, "")

    def test_unknown_flag(self):
        self.assertRefused(run("-r", "2", "allr", "--nodes", "2"), "unrecognized arguments: --nodes 2")

    def test_abbreviated_flag(self):
        self.assertRefused(run("-r", "2", "allr", "--nwork", "2"), "unrecognized arguments: --nwork 2")

    def test_bad_size_and_type(self):
        self.assertRefused(run("-r", "2", "-b", "32Q", "allr"), "argument -b/--minbytes: invalid size '32Q'")
        self.assertRefused(run("-r", "2", "-d", "fp64", "allr"), "argument -d/--datatype: invalid choice: 'fp64'")

    def test_missing_workers_and_operation(self):
        self.assertRefused(run("allr"), "the following arguments are required: -r/--nworkers")
        self.assertRefused(run("-r", "2"), "the following arguments are required: operation")

    def test_several_nodes_without_hosts(self):
        self.assertRefused(run("-r", "64", "-N", "2", "allr", env={"HOME": "/nonexistent"}),
                           "-N 2 needs MPI execution (--hosts, --hosts-file or ~/hosts) or --slurm-mode")

    def test_several_nodes_without_root_comm_id(self):
        env = {k: v for k, v in os.environ.items() if k != "NEURON_RT_ROOT_COMM_ID"}
        done = subprocess.run([str(STANDIN), "-r", "4", "-N", "2", "allr", "--hosts", "n1", "n2"],
                              capture_output=True, text=True, env=env)
        self.assertEqual(done.returncode, 2)
        self.assertIn("need NEURON_RT_ROOT_COMM_ID=", done.stderr)

    def test_workers_not_divisible(self):
        self.assertRefused(run("-r", "3", "-N", "2", "allr", "--hosts", "n1", "n2"),
                           "3 workers cannot be divided equally across 2 nodes")


class OneNode(unittest.TestCase):
    def test_table_and_average(self):
        done = run("-r", "2", "-b", "1kb", "-e", "4kb", "-f", "2", "-d", "fp32", "-n", "2", "-w", "1", "allr")
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["size(B)", "count(elems)", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)"])
        self.assertEqual([line.split()[:3] for line in lines[1:4]],
                         [["1024", "256", "fp32"], ["2048", "512", "fp32"], ["4096", "1024", "fp32"]])
        self.assertRegex(lines[4], r"^Avg bus bandwidth:\s+[0-9]+\.[0-9]{4}GB/s$")
        self.assertEqual(len(lines), 5)


if __name__ == "__main__":
    unittest.main(verbosity=2)
