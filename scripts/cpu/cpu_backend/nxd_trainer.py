"""The training loop both upstream trainer stand-ins share, run by torchrun over gloo on CPUs.

What it keeps from neuronx-distributed's example trainers (release 2.29): the rank layout (TP
innermost, then CP, DP, PP outermost; DP = world / (TP x CP x PP)), the data path
(load_from_disk, DistributedSampler(shuffle=False, drop_last=True) over the DP ranks,
DataLoader(drop_last=True)), a micro-step counter that carries across epochs with an optimizer
step every `accum` micro-steps, epochs looping until the step limit, gradient clipping at 1.0,
AdamW with no weight decay on biases and norms, the checkpoint tags and contents, and the
progress lines (each script's own format).

What the CPU backend does differently, on purpose:
- the model is replicated on every rank: TP, CP and PP only shape the rank layout, the
  checkpoint files and the compile-cache keys; gradients are averaged over each DP group, summed
  in rank order so a resumed run equals an uninterrupted one bit for bit;
- a resumed run continues after the last micro-batch the checkpoint had consumed (tp_zero1's
  upstream loop restarts the saved epoch from its first batch);
- on SIGUSR1 or SIGTERM every rank stops at the next optimizer step, a checkpoint is saved and
  the process exits with status 3 (the trnslurm train stage's requeue protocol; the real
  trainers do not do this);
- under NEURON_EXTRACT_GRAPHS_ONLY (neuron_parallel_compile) nothing is computed and no
  checkpoint is written: the graphs the run would compile are recorded in the compile cache;
  a normal run looks its graphs up there (hit, or "cache miss: compiling")."""

import json
import math
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from . import hf_dataset, neuron_cache, nxd_checkpoint, nxd_layout, standin
from .llama import Config, TinyLlama

EXIT_PREEMPTED = 3
_stop = {"requested": False}


def _request_stop(_signum, _frame):
    _stop["requested"] = True


def ordered_allreduce(group, bucket):
    """DDP communication hook: the mean of a gradient bucket over `group`, summed in rank order
    (gloo's ring order depends on the bucket layout, which DDP rebuilds after the first step)."""
    grads = bucket.buffer()
    parts = [torch.empty_like(grads) for _ in range(dist.get_world_size(group))]
    dist.all_gather(parts, grads, group=group)
    total = parts[0].clone()
    for part in parts[1:]:
        total += part
    total /= len(parts)
    done = torch.futures.Future()
    done.set_result(total)
    return done


class Throughput:
    """Sequences per second over a moving window of the last ~10 steps."""

    def __init__(self, seqs_per_interval, interval):
        self.seqs, self.window, self.times = seqs_per_interval, math.ceil(10 / interval), []
        self.start = time.time()

    def get(self):
        now = time.time()
        self.times = (self.times + [max(now - self.start, 1e-9)])[-self.window:]
        self.start = now
        return len(self.times) * self.seqs / sum(self.times)


@dataclass
class Plan:
    """What a trainer script hands the loop, in upstream's terms."""
    script: str
    flags: object               # the parsed upstream arguments (saved as cli_args)
    model_config: str           # --model_path / --training_config (a directory or a config.json)
    layers_override: int        # --num_layers / --num_layer; -1 keeps the config's
    hidden_override: int        # --hidden_size; -1 keeps the config's
    data_dir: str
    seq_len: int
    tp: int
    pp: int
    cp: int
    loader_batch: int           # rows a DP rank takes from the DataLoader at a time
    splits: int                 # micro-batches each loader batch is cut into (PP microbatches)
    accum: int                  # loader batches per optimizer step
    step_limit: int             # the loop stops at this optimizer step
    lr: float
    betas: tuple
    eps: float
    weight_decay: float
    schedule: object            # LambdaLR factor of the optimizer step
    seed: int
    checkpoint_dir: str
    checkpoint_freq: int
    num_kept: int
    loading_step: str
    load_pretrained: bool
    xser: bool
    zero1: bool
    layout_flags: dict          # qkv_linear, fuse_qkv, kv_size_multiplier
    graph_switches: dict        # flags that change a compiled graph on Trainium
    accepted_only: dict         # Trainium-only flags: accepted, recorded in the start event
    user_content: object        # (epoch, step, batch_idx, flags) -> dict saved as user_content.pt
    resume_step: object         # user_content -> the optimizer step it was saved at
    log_step: object            # (run, epoch, step, loss, lr_used, lr_next, norm, batch) -> None, on print_rank
    print_rank: object          # (tp, cp, dp, pp, pp_size) -> bool: the rank that prints LOG lines
    epoch_begin: object         # (run, epoch) -> None
    epoch_end: object           # (run, epoch, step, ustep, loss, t0) -> None, on global rank 0
    finished: object            # (run) -> None, on every rank at a normal end
    logging_interval: int
    metrics_file: str


def _fail(script, what, code=1):
    standin.refuse(script, what, code)


def model_config(plan: Plan) -> Config:
    path = Path(plan.model_config or "")
    file = path / "config.json" if path.is_dir() else path
    if not plan.model_config or not file.is_file():
        _fail(plan.script, f"no model config at {plan.model_config!r}: give the directory holding config.json")
    try:
        cfg = Config.from_hf(json.loads(file.read_text()), str(file))
    except (json.JSONDecodeError, ValueError) as e:
        _fail(plan.script, f"{file}: {e}")
    if plan.layers_override > 0:
        cfg.layers = plan.layers_override
    if plan.hidden_override != -1:
        cfg.hidden = plan.hidden_override
    cfg.seq_len = max(cfg.seq_len, plan.seq_len)  # max_position_embeddings, as upstream raises it
    try:
        cfg.validate()
    except ValueError as e:
        _fail(plan.script, f"{file}: {e}")
    return cfg


class Run:
    def __init__(self, plan: Plan):
        self.plan = plan
        self.script = plan.script
        self.extract = bool(os.environ.get("NEURON_EXTRACT_GRAPHS_ONLY"))
        torch.set_num_threads(1)
        signal.signal(signal.SIGUSR1, _request_stop)
        signal.signal(signal.SIGTERM, _request_stop)
        if "WORLD_SIZE" not in os.environ:
            _fail(self.script, "run me with torchrun (WORLD_SIZE is not set); xmp.spawn is not available on CPUs")
        dist.init_process_group("gloo")
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        mp = plan.tp * plan.cp * plan.pp
        if self.world % mp:
            _fail(self.script, f"world size {self.world} is not a multiple of TP {plan.tp} x CP {plan.cp} x PP {plan.pp}")
        self.dp = self.world // mp
        self.cfg = model_config(plan)
        r = self.rank
        self.tp_rank, r = r % plan.tp, r // plan.tp
        self.cp_rank, r = r % plan.cp, r // plan.cp
        self.dp_rank, self.pp_rank = r % self.dp, r // self.dp
        # Every DP group: the ranks of equal (tp, cp, pp) position.
        groups = {}
        for g in range(self.world):
            key = (g % plan.tp, (g // plan.tp) % plan.cp, g // (plan.tp * plan.cp * self.dp))
            groups.setdefault(key, []).append(g)
        mine = None
        for key in sorted(groups):
            handle = dist.new_group(groups[key])
            if self.rank in groups[key]:
                mine = handle
        self.dp_group = mine
        self.events = standin.Events(self.rank == 0)
        self.prints = plan.print_rank(self.tp_rank, self.cp_rank, self.dp_rank, self.pp_rank, plan.pp)
        hw = os.environ.get("TRNSLURM_STANDIN_HW_BACKEND", "trn1")
        flags = dict(plan.layout_flags)
        # NxD's model fuses q, k, v without the QKV linear only when they are of equal size.
        flags["coalesce_qkv"] = flags.get("coalesce_qkv", False) and self.cfg.heads == self.cfg.kv_heads
        if hw == "trn3" and flags.get("qkv_linear"):
            # NxD 2.29 initialises the QKV linear's kv weights for trn1 and trn2 only and raises
            # otherwise (src/neuronx_distributed/modules/qkv_linear.py, _initialize_affine_weight).
            _fail(self.script, "--qkv_linear on trn3: neuronx-distributed 2.29 raises \"Configure kv weight "
                  "initialization as per hw architecture\"; drop --qkv_linear (TP must then divide the kv heads)")
        try:
            self.layout = nxd_layout.Layout(tp=plan.tp, pp=plan.pp, hw_backend=hw, **flags)
            if self.layout.qkv_linear:
                nxd_layout._q_head_groups(self.cfg, self.layout)
        except nxd_layout.LayoutError as e:
            _fail(self.script, str(e))

    # ---- data -------------------------------------------------------------------------------
    def data(self):
        p = self.plan
        if not p.data_dir or not Path(p.data_dir).expanduser().exists():
            _fail(self.script, f"data directory {p.data_dir!r} does not exist")
        try:
            data = hf_dataset.HFDataset(p.data_dir)
            data.require(["input_ids", "labels"], seq_len=p.seq_len)
        except (hf_dataset.DatasetError, ValueError) as e:
            _fail(self.script, str(e))
        sampler = DistributedSampler(data, num_replicas=self.dp, rank=self.dp_rank, shuffle=False, drop_last=True)
        loader = DataLoader(data, batch_size=p.loader_batch, sampler=sampler, drop_last=True)
        if len(loader) == 0:
            _fail(self.script, f"{len(data)} rows give no batch of {p.loader_batch} on {self.dp} data-parallel "
                               "ranks: the upstream loop would never take a step")
        return data, loader

    # ---- checkpoints ------------------------------------------------------------------------
    def _shards_of(self, tag_dir: Path):
        shards = {}
        for t in range(self.layout.tp):
            for q in range(self.layout.pp):
                shards[(t, q)] = nxd_checkpoint.load_file(tag_dir / "model" / self.layout.shard_name(t, q))
        return nxd_layout.merge(shards, self.cfg, self.layout)

    def load_weights(self, tag_dir: Path, model):
        try:
            full = self._shards_of(tag_dir)
            model.load_state_dict(full, strict=True)
        except (FileNotFoundError, nxd_layout.LayoutError, RuntimeError, KeyError) as e:
            _fail(self.script, f"cannot load the model from {tag_dir}/model with TP {self.layout.tp}, PP "
                               f"{self.layout.pp}, qkv_linear {self.layout.qkv_linear}, fuse_qkv "
                               f"{self.layout.fuse_qkv}, kv_size_multiplier {self.layout.kv_size_multiplier}: {e}")

    def optim_name(self):
        dp = self.dp_rank if self.plan.zero1 else 0
        return f"dp_rank_{dp:02d}_tp_rank_{self.tp_rank:02d}_pp_rank_{self.pp_rank:02d}.pt"

    def save(self, tag, model, optimizer, scheduler, user_content):
        ckpt = Path(self.plan.checkpoint_dir)
        if self.rank == 0:
            nxd_checkpoint.begin(ckpt, tag)
        dist.barrier()
        tag_dir = ckpt / tag
        # Each rank writes its own files, as NxD's save does: the model shard of its (tp, pp)
        # position from DP rank 0, the optimizer state (every DP rank with ZeRO-1).
        if self.dp_rank == 0 and self.cp_rank == 0:
            shards = nxd_layout.shard(model.state_dict(), self.cfg, self.layout)
            nxd_checkpoint.save_file(shards[(self.tp_rank, self.pp_rank)],
                                     tag_dir / "model" / self.layout.shard_name(self.tp_rank, self.pp_rank),
                                     self.plan.xser)
        if (self.dp_rank == 0 or self.plan.zero1) and self.cp_rank == 0:
            nxd_checkpoint.save_file(optimizer.state_dict(), tag_dir / "optim" / self.optim_name(), self.plan.xser)
        if self.rank == 0:
            nxd_checkpoint.save_file(scheduler.state_dict(), tag_dir / "scheduler.pt", False)
            nxd_checkpoint.save_file(user_content, tag_dir / "user_content.pt", False)
        dist.barrier()
        if self.rank == 0:
            removed = nxd_checkpoint.finish(ckpt, tag, self.plan.num_kept)
            self.events("checkpoint", step=int(tag.split("_")[-1]) if tag.startswith("step_") else tag,
                        tag=tag, removed=removed)
        dist.barrier()

    def loading_tag(self):
        step = self.plan.loading_step
        if step == "-1":
            return None
        if not self.plan.checkpoint_dir:
            _fail(self.script, f"--loading_step {step} needs --checkpoint_dir")
        if step == "latest_if_exists":
            tags = nxd_checkpoint.completed_tags(self.plan.checkpoint_dir)
            return tags[-1] if tags else None
        return f"step_{step}"

    # ---- compile cache ----------------------------------------------------------------------
    def graphs(self):
        p = self.plan
        base = {"model": self.cfg.to_hf(), "trainer": Path(self.script).name, "tp": p.tp, "cp": p.cp, "pp": p.pp,
                "pp_stage": self.pp_rank, "micro_batch": p.loader_batch // p.splits, "seq_len": p.seq_len,
                "switches": p.graph_switches}
        return [dict(base, graph="forward_backward"), dict(base, graph="optimizer_step", dp=self.dp)]

    def use_cache(self):
        """Rank (tp 0, cp 0, dp 0) of each PP stage records or looks up that stage's graphs."""
        if self.tp_rank or self.cp_rank or self.dp_rank:
            dist.barrier()
            return
        try:
            for g in self.graphs():
                if self.extract:
                    d = neuron_cache.extract(g)
                    print(f"INFO ||NEURON_CC_WRAPPER||: Extracting graphs ({d / 'model.hlo_module.pb'}) for "
                          "ahead-of-time parallel compilation. No compilation was done.", flush=True)
                    self.events("compile_cache", state="extracted", entry=str(d), graph=g["graph"])
                    continue
                state, d = neuron_cache.lookup(g)
                if state == "hit":
                    print(f"INFO ||NCC_WRAPPER||: Using a cached neff at {d / 'model.neff'}. Exiting with a "
                          "successfully compiled graph.", flush=True)
                elif state == "miss":
                    print(f"INFO ||NCC_WRAPPER||: cache miss: compiling {d / 'model.hlo_module.pb'} "
                          f"(graph {g['graph']}, PP stage {self.pp_rank})", flush=True)
                elif state == "failed":
                    _fail(self.script, f"Got a cached failed neff at {d / 'model.neff'}: add "
                                       "--retry_failed_compilation to NEURON_CC_FLAGS to compile it again")
                self.events("compile_cache", state=state, entry=str(d) if d else None, graph=g["graph"])
        except neuron_cache.CacheError as e:
            _fail(self.script, str(e))
        dist.barrier()

    # ---- the loop ---------------------------------------------------------------------------
    def train(self):
        p = self.plan
        data, loader = self.data()
        micro_per_epoch = len(loader)
        torch.manual_seed(p.seed)
        model = TinyLlama(self.cfg)
        decay = [t for n, t in model.named_parameters() if not any(k in n for k in ("bias", "norm"))]
        no_decay = [t for n, t in model.named_parameters() if any(k in n for k in ("bias", "norm"))]
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": p.weight_decay},
                                       {"params": no_decay, "weight_decay": 0.0}],
                                      lr=p.lr, betas=p.betas, eps=p.eps, weight_decay=p.weight_decay)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, p.schedule)
        step, resumed = 0, None
        tag = self.loading_tag()
        if tag:
            tag_dir = Path(p.checkpoint_dir) / tag
            if not (tag_dir / "done").is_file():
                _fail(self.script, f"{tag_dir}: no completed checkpoint there (no done file)")
            self.load_weights(tag_dir, model)
            optimizer.load_state_dict(nxd_checkpoint.load_file(tag_dir / "optim" / self.optim_name()))
            scheduler.load_state_dict(torch.load(tag_dir / "scheduler.pt"))
            step = p.resume_step(torch.load(tag_dir / "user_content.pt"))
            resumed = tag
        elif p.load_pretrained:
            if not p.checkpoint_dir:
                _fail(self.script, "--pretrained_weight loads <checkpoint_dir>/pretrained_weight: give --checkpoint_dir")
            self.load_weights(Path(p.checkpoint_dir) / "pretrained_weight", model)
        ddp = DistributedDataParallel(model, process_group=self.dp_group)
        ddp.register_comm_hook(self.dp_group, ordered_allreduce)

        seen = {k: os.environ.get(k) for k in ("MASTER_ADDR", "MASTER_PORT", "GROUP_RANK", "RANK", "LOCAL_RANK",
                                                "WORLD_SIZE")}
        seen["hostname"] = socket.gethostname()
        everyone = [None] * self.world
        dist.all_gather_object(everyone, seen)
        micro_size = p.loader_batch // p.splits
        self.events("start", script=Path(self.script).name, world=self.world, dp=self.dp, tp=p.tp, pp=p.pp, cp=p.cp,
                    grad_accum=p.accum * p.splits, micro_batch=micro_size, gbs=micro_size * p.accum * p.splits * self.dp,
                    micro_per_epoch=micro_per_epoch, samples=len(data), planned_total=p.step_limit,
                    resumed_from=step if resumed else None, resumed_tag=resumed, extract_graphs_only=self.extract,
                    accepted_only=p.accepted_only, ranks=everyone)
        self.write_parameters(micro_size)
        self.use_cache()

        delay = standin.env_float("TRNSLURM_STANDIN_STEP_DELAY")
        self.throughput = Throughput(p.loader_batch * self.dp * p.accum * p.logging_interval, p.logging_interval)
        self.last_throughput = 0.0
        t0 = time.time()
        micro = step * p.accum  # loader batches consumed so far: the counter that carries across epochs
        epoch, skip = divmod(micro, micro_per_epoch)  # a resumed run goes on after the last batch used
        ustep, running, last_loss, preempted = 0, 0.0, float("nan"), False
        calls_per_step = p.accum * p.splits
        while step < p.step_limit and not preempted:
            p.epoch_begin(self, epoch)
            for batch_idx, batch in enumerate(loader):
                if skip > 0:
                    skip -= 1
                    continue
                micro += 1
                ustep += 1
                stepping = micro % p.accum == 0
                if not self.extract:
                    pieces = zip(batch["input_ids"].chunk(p.splits), batch["labels"].chunk(p.splits))
                    for i, (ids, labels) in enumerate(pieces):
                        if stepping and i == p.splits - 1:  # the last backward of a step synchronises
                            loss = ddp(ids, labels) / calls_per_step
                            loss.backward()
                        else:
                            with ddp.no_sync():
                                loss = ddp(ids, labels) / calls_per_step
                                loss.backward()
                        running += loss.item()
                if not stepping:
                    continue
                lr = scheduler.get_last_lr()[0]  # the rate this step uses
                norm = None
                if not self.extract:
                    norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
                optimizer.step()  # extracting: no gradients, so no update
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
                step += 1
                if delay > 0:
                    time.sleep(delay)
                total = torch.tensor([running])
                dist.all_reduce(total, group=self.dp_group)
                loss_value = total.item() / self.dp if not self.extract else float("nan")
                running, last_loss = 0.0, loss_value
                self.events("step", step=step, epoch=epoch, loss=round(loss_value, 5) if not self.extract else None,
                            lr=lr)
                if self.prints:
                    p.log_step(self, epoch, step, loss_value, lr, optimizer.param_groups[0]["lr"], norm, batch)
                flag = torch.tensor([1 if _stop["requested"] else 0])
                dist.all_reduce(flag)
                due = p.checkpoint_freq > 0 and step % p.checkpoint_freq == 0
                if not self.extract and (due or flag.item()) and p.checkpoint_dir:
                    self.save(f"step_{step}", model, optimizer, scheduler, p.user_content(epoch, step, batch_idx))
                if flag.item():
                    self.events("preempted", step=step)
                    preempted = True
                    break
                if step >= p.step_limit:
                    break
            if self.rank == 0:
                p.epoch_end(self, epoch, step, ustep, last_loss, t0)
            self.events("epoch_end", epoch=epoch, step=step, preempted=preempted)
            if step >= p.step_limit or preempted:
                break
            epoch += 1
        self.write_metrics(epoch, step, ustep, last_loss, time.time() - t0)
        self.events("end", step=step, preempted=preempted)
        if not preempted:
            p.finished(self)
        dist.barrier()
        dist.destroy_process_group()
        sys.exit(EXIT_PREEMPTED if preempted else 0)

    # ---- metrics file (upstream's TrainingMetrics JSON: results.parameters, results.metrics) ----
    def _update_metrics(self, key, data):
        if self.rank != 0 or not self.plan.metrics_file:
            return
        path = Path(self.plan.metrics_file)
        doc = {}
        if path.is_file() and path.read_text().strip():
            doc = json.loads(path.read_text())
        results = doc.setdefault("results", {})
        if isinstance(data, list):
            results.setdefault(key, []).extend(data)
        else:
            results.setdefault(key, {}).update(data)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))

    def write_parameters(self, micro_size):
        p = self.plan
        self._update_metrics("parameters", {
            "Model": "llama", "Model configuration": json.dumps(self.cfg.to_hf()), "World size": self.world,
            "Data parallel degree": self.dp, "Batch size": micro_size, "Total steps": p.step_limit,
            "Seed": p.seed, "Gradient accumulation microsteps": p.accum * p.splits,
            "Dataset": os.path.basename(os.path.normpath(p.data_dir)), "Backend": "trnslurm CPU stand-in"})

    def write_metrics(self, epoch, step, ustep, loss, seconds):
        if self.extract:
            return
        extra = {"Epoch": epoch, "Global step": step, "Microstep": ustep}
        now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        self._update_metrics("metrics", [
            {"MetricName": "Final loss", "MeasuredValue": loss, "Units": "", "Timestamp": now, "AdditionalData": extra},
            {"MetricName": "Time to train", "MeasuredValue": round(seconds / 60, 4), "Units": "minutes",
             "Timestamp": now, "AdditionalData": extra}])
