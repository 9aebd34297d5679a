"""The CPU reference backend (scripts/cpu): sharding layout, the dataset reader, the sampler
arithmetic the planner relies on, and resuming from a checkpoint. Run by CTest (label cpu)."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, DistributedSampler

CPU = Path(__file__).resolve().parents[2] / "scripts" / "cpu"
sys.path.insert(0, str(CPU))

import checkpoints  # noqa: E402
import megatron  # noqa: E402
import sharding  # noqa: E402
from model import Config, TinyLlama  # noqa: E402


def tiny_config(seq_len=8):
    return Config(vocab=64, hidden=16, layers=2, heads=4, kv_heads=2, intermediate=32, seq_len=seq_len)


class ShardingTest(unittest.TestCase):
    def test_layout_and_round_trip(self):
        state = TinyLlama(tiny_config()).state_dict()
        shards = sharding.shard(state, 2)
        q = "model.layers.0.self_attn.q_proj.weight"
        o = "model.layers.0.self_attn.o_proj.weight"
        emb = "model.embed_tokens.weight"
        norm = "model.layers.0.input_layernorm.weight"
        self.assertEqual(shards[0][q].shape, (8, 16))  # column-parallel: dim 0 split
        self.assertEqual(shards[1][o].shape, (16, 8))  # row-parallel: dim 1 split
        self.assertEqual(shards[0][emb].shape, (32, 16))  # vocabulary split
        self.assertTrue(torch.equal(shards[1][norm], state[norm]))  # replicated
        self.assertTrue(torch.equal(shards[1][q], state[q][8:]))
        merged = sharding.merge(shards)
        self.assertEqual(set(merged), set(state))
        for name in state:
            self.assertTrue(torch.equal(merged[name], state[name]), name)

    def test_refuses_indivisible(self):
        with self.assertRaises(SystemExit):
            sharding.shard(TinyLlama(tiny_config()).state_dict(), 3)


class MegatronTest(unittest.TestCase):
    def test_round_trip_and_sample_count(self):
        with tempfile.TemporaryDirectory() as d:
            docs = [list(range(10)), list(range(100, 117)), [5, 6, 7]]
            megatron.write(Path(d) / "tok", docs)
            idx = (Path(d) / "tok.idx").read_bytes()
            self.assertEqual(len(idx), 34 + 12 * 3 + 8 * 4)  # the layout the planner reads
            data = megatron.TokenSamples(str(Path(d) / "tok.idx"), seq_len=4)
            self.assertEqual(len(data), (30 - 1) // 4)
            x, y = data[2]
            stream = [t for doc in docs for t in doc]
            self.assertEqual(x.tolist(), stream[8:12])
            self.assertEqual(y.tolist(), stream[9:13])


def trainer_steps(n, dp, mbs, acc, epochs):
    """Optimizer steps as the training loop takes them: real DistributedSampler and DataLoader
    lengths, the micro-step counter carried across epochs."""
    data = list(range(n))
    micro = 0
    steps = []
    for epoch in range(epochs):
        per_rank = []
        for rank in range(dp):
            sampler = DistributedSampler(data, num_replicas=dp, rank=rank, drop_last=True, shuffle=True, seed=1)
            sampler.set_epoch(epoch)
            per_rank.append(len(DataLoader(data, batch_size=mbs, sampler=sampler, drop_last=True)))
        assert len(set(per_rank)) == 1
        before = micro // acc
        micro += per_rank[0]
        steps.append(micro // acc - before)
    return steps


class SamplerArithmeticTest(unittest.TestCase):
    def test_matches_the_planner_formula(self):
        for n, dp, mbs, acc, epochs in [(1249, 2, 2, 2, 3), (1000, 4, 1, 3, 3), (97, 3, 2, 5, 4), (10, 4, 3, 1, 2)]:
            micro = (n // dp) // mbs
            steps = trainer_steps(n, dp, mbs, acc, epochs)
            self.assertEqual(steps[0], micro // acc, (n, dp, mbs, acc))
            self.assertEqual(sum(steps), epochs * micro // acc, (n, dp, mbs, acc))


class CheckpointTest(unittest.TestCase):
    def test_everything_reaches_the_disk_before_done(self):
        # Crash consistency: every file and directory of a checkpoint is fsynced before `done`
        # exists (a crash must never leave `done` beside data still in the page cache).
        synced = []
        real_fsync = os.fsync

        def spy(fd):
            synced.append(os.readlink(f"/proc/self/fd/{fd}"))
            real_fsync(fd)

        with tempfile.TemporaryDirectory() as d:
            ckpt = Path(d).resolve() / "ckpt"
            tmp = checkpoints.begin(ckpt, 4)
            sharding.save_shards(TinyLlama(tiny_config()).state_dict(), 2, tmp / "model")
            (tmp / "optim").mkdir()
            torch.save({"lr": 1.0}, tmp / "optim" / "optim.pt")
            torch.save({"step": 4}, tmp / "user_content.pt")
            os.fsync = spy
            try:
                final = checkpoints.commit(ckpt, tmp, 4)
            finally:
                os.fsync = real_fsync
            self.assertEqual(checkpoints.newest(ckpt), (4, final))
            named = [p.replace("/.step_4.partial", "/step_4") for p in synced]
            done = named.index(str(final / "done"))
            wanted = [str(ckpt), str(final)] + [str(p) for p in final.rglob("*") if p.name != "done"]
            for path in wanted:
                self.assertIn(path, named[:done], f"{path} not fsynced before done")
            self.assertIn(str(final), named[done:], "the directory holding done not fsynced after it")


class ResumeTest(unittest.TestCase):
    """A run stopped at a checkpoint and resumed ends with the same weights as one that never stopped."""

    def run_training(self, work, ckpt, extra):
        # Not --standalone: its rendezvous is always localhost:29400, which two runs on one machine
        # (suites of several checkouts) would share. A free port of our own instead.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        args = [str(CPU / "torchrun.py"), "--nnodes", "1", "--node_rank", "0", "--master_addr", "127.0.0.1",
                "--master_port", str(port), "--nproc_per_node", "2", str(CPU / "train.py"),
                "--data", str(work / "data" / "tok"), "--init_dir", str(work / "sharded"),
                "--checkpoint_dir", str(ckpt), "--checkpoint_every", "4", "--tp", "2", "--mbs", "2", "--gbs", "8",
                "--grad_accum", "4", "--epochs", "2", "--total_steps", "1000", "--warmup_steps", "2",
                "--lr", "3e-3", "--log", str(work / "log.jsonl")] + extra
        env = dict(os.environ, OMP_NUM_THREADS="1")
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)

    def prepare(self, work):
        # A small dataset and an initial checkpoint, sharded for TP 2, as the convert stage leaves it.
        py = "/usr/bin/python3"
        subprocess.run([py, str(CPU / "make_demo_data.py"), "--dataset", str(work / "data" / "tok"),
                        "--checkpoint", str(work / "init"), "--tokens", "3000", "--seq-len", "16"],
                       check=True, capture_output=True)
        subprocess.run([py, str(CPU / "convert.py"), "--input_dir", str(work / "init"), "--output_dir",
                        str(work / "sharded"), "--tp_size", "2"], check=True, capture_output=True)

    def test_resume_gives_identical_weights(self):
        with tempfile.TemporaryDirectory() as d:
            work = Path(d)
            self.prepare(work)
            whole = self.run_training(work, work / "a", [])
            self.assertEqual(whole.returncode, 0, whole.stderr[-2000:])
            first = self.run_training(work, work / "b", ["--max_steps", "9"])
            self.assertEqual(first.returncode, 0, first.stderr[-2000:])
            self.assertEqual(checkpoints.newest(work / "b")[0], 9)
            rest = self.run_training(work, work / "b", [])
            self.assertEqual(rest.returncode, 0, rest.stderr[-2000:])
            end_a, end_b = checkpoints.newest(work / "a"), checkpoints.newest(work / "b")
            self.assertEqual(end_a[0], end_b[0])
            wa = sharding.load_shards(end_a[1] / "model")
            wb = sharding.load_shards(end_b[1] / "model")
            for name in wa:
                self.assertTrue(torch.equal(wa[name], wb[name]), name)
            starts = [json.loads(l) for l in (work / "log.jsonl").read_text().splitlines() if '"start"' in l]
            self.assertEqual([s["resumed_from"] for s in starts], [None, None, 9])

    def test_step_delay_slows_each_step(self):
        # --step_delay (the resilience tests' slow run) sleeps after every optimizer step.
        with tempfile.TemporaryDirectory() as d:
            work = Path(d)
            self.prepare(work)
            run = self.run_training(work, work / "c", ["--max_steps", "4", "--no_checkpoint", "--step_delay", "0.6"])
            self.assertEqual(run.returncode, 0, run.stderr[-2000:])
            events = [json.loads(l) for l in (work / "log.jsonl").read_text().splitlines()]
            times = [e["time"] for e in events if e["event"] == "step"]
            self.assertEqual(len(times), 4)
            self.assertGreaterEqual(min(b - a for a, b in zip(times, times[1:])), 0.6)


if __name__ == "__main__":
    unittest.main()
