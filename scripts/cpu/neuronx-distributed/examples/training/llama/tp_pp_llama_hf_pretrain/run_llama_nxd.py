#!/usr/bin/python3
"""CPU stand-in for neuronx-distributed's examples/training/llama/tp_pp_llama_hf_pretrain/run_llama_nxd.py
(release 2.29): the same options read with parse_known_args as upstream (an unknown flag is
ignored and named on stderr; TRNSLURM_STANDIN_STRICT=1 makes it an error), the same meaning for
what a plan controls, the same checkpoints and progress lines, run with torchrun on CPUs (see
scripts/cpu/cpu_backend/nxd_trainer.py and scripts/cpu/README.md).

Batch: each data-parallel rank takes --train_batch_size rows per optimizer step, cut into
--num_microbatches pipeline micro-batches whose gradients accumulate (there is no
accumulation flag); DP = world size / (TP x PP x CP); global batch = train_batch_size x DP.
The loop stops at --max_steps, also the length of the cosine schedule (warmup over
--warmup_steps, --constant_steps, down to --min_lr), as the example's lr.py CosineAnnealing."""

import argparse
import math
import time

from cpu_backend import nxd_trainer, standin

SCRIPT = "run_llama_nxd.py"
PARSE_KNOWN = True  # upstream calls parse_known_args


def build_parser():
    """The options of the upstream script: names, types, defaults and groups as upstream's."""
    p = argparse.ArgumentParser(description="Llama pretraining with TP and PP (neuronx-distributed example), "
                                            "CPU stand-in.")
    p.add_argument("--num_microbatches", type=int, default=8, help="pipeline micro-batches per step")
    p.add_argument("--tensor_parallel_size", type=int, default=8, help="TP degree")
    p.add_argument("--num_layer", type=int, default=-1, help="decoder layers, overriding the config's")
    p.add_argument("--hidden_size", type=int, default=-1, help="hidden size, overriding the config's")
    p.add_argument("--train_batch_size", type=int, default=16, help="rows per step on each data-parallel rank")
    p.add_argument("--pipeline_parallel_size", type=int, default=1, help="PP degree")
    p.add_argument("--virtual_pipeline_size", type=int, default=1, help="virtual pipeline stages per PP rank")
    p.add_argument("--context_parallel_size", type=int, default=1, help="CP degree")
    p.add_argument("--kv_replicator", type=int, default=1, help="key/value head replication of the QKV linear")
    p.add_argument("--seq_len", type=int, default=4096, help="sequence length")
    p.add_argument("--use_flash_attention", type=int, default=0, help="Trainium kernel switch (recorded)")
    p.add_argument("--transpose_nki_inputs", type=int, default=1, help="Trainium kernel switch (recorded)")
    p.add_argument("--training_dir", type=str, default=None, help="tokenized dataset written by save_to_disk")
    p.add_argument("--training_config", type=str, default=None, help="directory of the model's config.json")
    p.add_argument("--trace_file_path", type=str, default=None, help="PP tracing file (recorded)")
    p.add_argument("--tb_dir", type=str, default="output", help="TensorBoard directory (not written here)")
    p.add_argument("--max_steps", type=int, default=100, help="optimizer steps, and the schedule's length")
    p.add_argument("--checkpoint_freq", type=int, default=100000, help="a checkpoint every this many steps")
    p.add_argument("--checkpoint_dir", type=str, default=None)
    p.add_argument("--loading_step", type=str, default="-1",
                   help="step to resume from, -1 for none, latest_if_exists for the newest checkpoint")
    p.add_argument("--num_kept_checkpoint", type=int, default=-1, help="checkpoints kept (-1: all)")
    p.add_argument("--save_load_xser", type=int, default=1, help="checkpoints in the xser layout")
    p.add_argument("--pretrained_weight", type=int, default=None, help="1: load <checkpoint_dir>/pretrained_weight")
    p.add_argument("--async_checkpoint_saving", type=int, default=0, help="accepted; saving is synchronous here")
    p.add_argument("--use_master_weight_in_ckpt", type=int, default=0, help="Trainium precision switch (recorded)")
    p.add_argument("--avoid_saving_lower_precision_weights", type=int, default=0,
                   help="Trainium precision switch (recorded)")
    p.add_argument("--use_gpu_compatible_precision", default=1, type=int, help="Trainium switch (recorded)")
    p.add_argument("--metrics_file", type=str, default="results.json", help="JSON file of parameters and metrics")
    p.add_argument("--fuse_microbatches", type=int, default=0, help="Trainium graph switch (recorded)")
    opt = p.add_argument_group(title="optimization", description="optimizer and memory switches")
    opt.add_argument("--weight_decay", default=0.01, type=float, help="AdamW weight decay")
    opt.add_argument("--beta1", default=0.9, type=float, help="AdamW beta1")
    opt.add_argument("--beta2", default=0.95, type=float, help="AdamW beta2")
    opt.add_argument("--use_fp32_optimizer", default=0, type=int, help="Trainium switch (recorded)")
    opt.add_argument("--use_zero1_optimizer", default=0, type=int, help="ZeRO-1: optimizer files per DP rank")
    opt.add_argument("--seed", default=1234, type=int, help="random seed")
    opt.add_argument("--use_amp", default=0, type=int, help="Trainium switch (recorded)")
    opt.add_argument("--use_deferred_init", default=0, type=int, help="Trainium switch (recorded)")
    opt.add_argument("--use_meta_device_init", default=0, type=int, help="Trainium switch (recorded)")
    opt.add_argument("--use_selective_checkpoint", default=0, type=int, help="Trainium switch (recorded)")
    opt.add_argument("--use_sequence_parallel", default=1, type=int, help="Trainium switch (recorded)")
    p.add_argument("--deallocate_pipeline_outputs", type=int, default=1, help="Trainium switch (recorded)")
    opt.add_argument("--qkv_linear", default=0, type=int, help="QKV linear layer: names, head order")
    opt.add_argument("--fuse_qkv", type=int, default=1, help="fused q/k/v projection")
    lr = p.add_argument_group(title="lr", description="learning-rate schedule")
    lr.add_argument("--lr", type=float, default=None, help="peak learning rate")
    lr.add_argument("--warmup_steps", type=int, default=None, help="optimizer steps of warmup")
    lr.add_argument("--constant_steps", type=int, default=None, help="steps held at min_lr at the end")
    lr.add_argument("--min_lr", type=float, default=None, help="the rate the cosine decays to")
    lr.add_argument("--logging_interval", type=int, default=1, help="a progress line every this many steps")
    return p


def cosine_annealing(base: float, max_steps: int, min_lr: float, warmup, constant):
    """The example's lr.py CosineAnnealing (NeMo's policy) as a LambdaLR factor of base."""
    w, c = warmup or 0, constant or 0
    decay = max_steps - (c + w)

    def warmup_then_cosine(step):  # the policy used when constant steps are given
        if w > 0 and step <= w:
            return base * step / w
        if step > w + decay:
            return min_lr
        return min_lr + 0.5 * (math.cos(math.pi * (step - w) / decay) + 1.0) * (base - min_lr)

    def rate(step):
        if w > 0 and step <= w:
            return base * (step + 1) / (w + 1) if c == 0 else warmup_then_cosine(step)
        if c > 0 and w + decay < step <= max_steps:
            return warmup_then_cosine(step)
        if step > max_steps:
            return min_lr
        if c == 0:
            return (base - min_lr) * 0.5 * (1 + math.cos(math.pi * (step - w) / (max_steps - w))) + min_lr
        return warmup_then_cosine(step)

    return lambda step: rate(step) / base


def main(argv=None):
    a = standin.parse(build_parser(), SCRIPT, known=PARSE_KNOWN, argv=argv)
    if a.lr is None:
        standin.refuse(SCRIPT, "--lr is needed (upstream's schedule starts from it)")
    if a.min_lr is None:
        standin.refuse(SCRIPT, "--min_lr is needed: upstream's CosineAnnealing compares the rate with it after "
                               "warmup and fails without it")
    if a.min_lr >= a.lr:
        standin.refuse(SCRIPT, f"--min_lr {a.min_lr} must be below --lr {a.lr}")
    if a.num_microbatches < 1 or a.train_batch_size % a.num_microbatches:
        standin.refuse(SCRIPT, f"--train_batch_size {a.train_batch_size} does not divide into --num_microbatches "
                               f"{a.num_microbatches} pipeline micro-batches")
    trainium_only = {k: getattr(a, k) for k in (
        "use_flash_attention", "transpose_nki_inputs", "trace_file_path", "async_checkpoint_saving",
        "use_master_weight_in_ckpt", "avoid_saving_lower_precision_weights", "use_gpu_compatible_precision",
        "fuse_microbatches", "use_fp32_optimizer", "use_amp", "use_deferred_init", "use_meta_device_init",
        "use_selective_checkpoint", "use_sequence_parallel", "deallocate_pipeline_outputs", "tb_dir")}

    def log_step(run, epoch, step, loss, lr_used, lr_next, norm, batch):
        if (step - 1) % a.logging_interval:  # upstream counts from 0 and logs before counting the step
            return
        now = time.time()
        elapsed = now - getattr(run, "step_start", now)
        run.step_start = now
        print(f"step {step - 1} step_time {elapsed}s throughput {run.throughput.get()} seq/s step loss {loss} "
              f"grad norm {norm}", flush=True)

    def epoch_begin(run, epoch):
        run.step_start = time.time()
        if run.rank == 0:
            print(f"Epoch {epoch}", flush=True)

    plan = nxd_trainer.Plan(
        script=SCRIPT, flags=a, model_config=a.training_config, layers_override=a.num_layer,
        hidden_override=a.hidden_size, data_dir=a.training_dir, seq_len=a.seq_len, tp=a.tensor_parallel_size,
        pp=a.pipeline_parallel_size, cp=a.context_parallel_size, loader_batch=a.train_batch_size,
        splits=a.num_microbatches, accum=1, step_limit=a.max_steps, lr=a.lr, betas=(a.beta1, a.beta2), eps=1e-8,
        weight_decay=a.weight_decay,
        schedule=cosine_annealing(a.lr, a.max_steps, a.min_lr, a.warmup_steps, a.constant_steps), seed=a.seed,
        checkpoint_dir=a.checkpoint_dir, checkpoint_freq=a.checkpoint_freq, num_kept=a.num_kept_checkpoint,
        loading_step=a.loading_step, load_pretrained=a.pretrained_weight == 1, xser=a.save_load_xser > 0,
        zero1=a.use_zero1_optimizer > 0,
        layout_flags={"qkv_linear": a.qkv_linear > 0, "fuse_qkv": a.qkv_linear > 0 and a.fuse_qkv > 0,
                      "coalesce_qkv": a.qkv_linear == 0 and a.fuse_qkv > 0 and a.kv_replicator == 1,
                      "kv_size_multiplier": a.kv_replicator if a.qkv_linear > 0 else 1,
                      "virtual_pp": a.virtual_pipeline_size},
        graph_switches={**trainium_only, "use_zero1_optimizer": a.use_zero1_optimizer, "qkv_linear": a.qkv_linear,
                        "kv_replicator": a.kv_replicator, "fuse_qkv": a.fuse_qkv, "weight_decay": a.weight_decay,
                        "betas": [a.beta1, a.beta2], "num_microbatches": a.num_microbatches,
                        "virtual_pipeline_size": a.virtual_pipeline_size},
        accepted_only=trainium_only,
        user_content=lambda epoch, step, batch_idx: {"total_steps": step, "batch_idx": batch_idx, "epoch": epoch,
                                                     "cli_args": vars(a)},
        resume_step=lambda uc: uc["total_steps"],
        log_step=log_step,
        print_rank=lambda tp, cp, dp, pp, pp_size: pp == pp_size - 1 and dp == 0 and tp == 0 and cp == 0,
        epoch_begin=epoch_begin, epoch_end=lambda *_: None,
        finished=lambda run: print("Training finished successfully", flush=True),
        logging_interval=a.logging_interval, metrics_file=a.metrics_file)
    nxd_trainer.Run(plan).train()


if __name__ == "__main__":
    main()
