"""The CPU reference backend's shared code (scripts/cpu/cpu_backend) where the stand-ins' own tests
(test_standins.py) cannot show it: the sampler arithmetic the planner relies on, and the crash
consistency of the checkpoint writer. Run by CTest (label cpu)."""

import os
import tempfile
import unittest
from pathlib import Path

from torch.utils.data import DataLoader, DistributedSampler

from cpu_backend import nxd_checkpoint


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
        # exists (a crash must never leave `done` beside data still in the page cache), and the
        # directory holding `done` after it.
        synced = []
        real_fsync = os.fsync

        def spy(fd):
            synced.append(os.readlink(f"/proc/self/fd/{fd}"))
            real_fsync(fd)

        with tempfile.TemporaryDirectory() as d:
            ckpt = Path(d).resolve() / "ckpt"
            tag = nxd_checkpoint.begin(ckpt, "step_4")
            nxd_checkpoint.save_file({"w": list(range(4))}, tag / "model" / "dp_rank_00_tp_rank_00_pp_rank_00.pt",
                                     xser=False)
            nxd_checkpoint.save_file({"lr": 1.0}, tag / "optim" / "optim.pt", xser=False)
            os.fsync = spy
            try:
                nxd_checkpoint.finish(ckpt, "step_4", num_kept=2)
            finally:
                os.fsync = real_fsync
            self.assertEqual(nxd_checkpoint.completed_tags(ckpt), ["step_4"])
            done = synced.index(str(tag / "done"))
            wanted = [str(tag)] + [str(p) for p in tag.rglob("*") if p.is_dir()]
            for path in wanted:
                self.assertIn(path, synced[:done], f"{path} not fsynced before done")
            self.assertIn(str(tag), synced[done:], "the directory holding done not fsynced after it")

    def test_an_unfinished_tag_is_not_completed(self):
        with tempfile.TemporaryDirectory() as d:
            ckpt = Path(d) / "ckpt"
            nxd_checkpoint.begin(ckpt, "step_2")
            nxd_checkpoint.finish(ckpt, "step_2", num_kept=2)
            nxd_checkpoint.begin(ckpt, "step_4")  # a crash here: no done
            self.assertEqual(nxd_checkpoint.completed_tags(ckpt), ["step_2"])


if __name__ == "__main__":
    unittest.main()
