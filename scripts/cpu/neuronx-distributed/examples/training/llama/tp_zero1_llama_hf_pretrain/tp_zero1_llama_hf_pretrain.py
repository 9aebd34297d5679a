#!/usr/bin/python3
"""CPU stand-in for neuronx-distributed's
examples/training/llama/tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py (release 2.29):
the same options, parsed as strictly (parse_args: an unknown flag exits 2), the same meaning for
what a plan controls, the same checkpoints and LOG lines, run with torchrun on CPUs (see
scripts/cpu/cpu_backend/nxd_trainer.py for the loop and scripts/cpu/README.md for every difference).

Batch: --batch_size rows per micro-step on each data-parallel rank, an optimizer step every
--grad_accum_usteps micro-steps, DP = world size / (TP x CP); global batch = batch_size x
grad_accum_usteps x DP. The loop stops at --steps_this_run optimizer steps (-1: --max_steps);
--max_steps is the length of the learning-rate schedule (linear warmup over --warmup_steps,
then linear decay to 0 at max_steps, as transformers' get_linear_schedule_with_warmup)."""

import argparse
import os
import time

from cpu_backend import nxd_trainer, standin

SCRIPT = "tp_zero1_llama_hf_pretrain.py"
PARSE_KNOWN = False  # upstream calls parse_args


def build_parser():
    """The options of the upstream script: names, types, defaults and actions as upstream's."""
    p = argparse.ArgumentParser(description="Llama pretraining with TP and ZeRO-1 (neuronx-distributed example), "
                                            "CPU stand-in.")
    p.add_argument("--model_path", type=str, help="directory of the model's config.json")
    p.add_argument("--data_dir", type=str, help="tokenized dataset written by save_to_disk")
    p.add_argument("--output_dir", type=str, default="./output", help="created for logs")
    p.add_argument("--metrics_file", type=str, default="results.json", help="JSON file of parameters and metrics")
    p.add_argument("--batch_size", type=int, default=8, help="micro-batch per data-parallel rank")
    p.add_argument("--max_steps", type=int, help="optimizer steps of the learning-rate schedule")
    p.add_argument("--steps_this_run", type=int, help="stop after this many optimizer steps; -1: max_steps")
    p.add_argument("--seed", type=int, default=12349, help="random seed")
    p.add_argument("--lr", type=float, default=4e-4, help="peak learning rate")
    p.add_argument("--warmup_steps", type=int, default=2000, help="optimizer steps of linear warmup")
    p.add_argument("--grad_accum_usteps", type=int, default=64, help="micro-steps per optimizer step")
    p.add_argument("--print_grad_norm", default=False, action="store_true", help="add the gradient norm to LOG lines")
    p.add_argument("--tensor_parallel_size", default=2, type=int, help="TP degree")
    p.add_argument("--context_parallel_size", type=int, default=1, help="CP degree")
    p.add_argument("--seq_len", default=2048, type=int, help="sequence length")
    p.add_argument("--use_mix_precision", action="store_true", help="Trainium precision switch (recorded)")
    p.add_argument("--use_zero_1", action="store_true", help="ZeRO-1: optimizer files per DP rank")
    p.add_argument("--num_layers", type=int, default=-1, help="decoder layers, overriding the config's")
    p.add_argument("--sequence_parallel_enabled", default=False, action="store_true", help="Trainium switch (recorded)")
    p.add_argument("--selective_checkpoint_enabled", default=False, action="store_true",
                   help="Trainium switch (recorded)")
    p.add_argument("--use_meta_device_init", default=False, action="store_true", help="Trainium switch (recorded)")
    p.add_argument("--logging_interval", default=1, type=int, help="a LOG line every this many steps")
    p.add_argument("--qkv_linear", default=False, action="store_true", help="QKV linear layer: names, head order")
    p.add_argument("--kv_replicator", default=1, type=int, help="key/value head replication of the QKV linear")
    p.add_argument("--use_gpu_compatible_precision", default=1, type=int, help="Trainium switch (recorded)")
    p.add_argument("--weight_decay", default=0.01, type=float, help="AdamW weight decay")
    p.add_argument("--beta1", default=0.9, type=float, help="AdamW beta1")
    p.add_argument("--beta2", default=0.999, type=float, help="AdamW beta2")
    p.add_argument("--checkpoint_freq", type=int, default=100000, help="a checkpoint every this many steps")
    p.add_argument("--checkpoint_dir", type=str, default=None)
    p.add_argument("--pretrained_weight", default=False, action="store_true")
    p.add_argument("--loading_step", type=str, default="-1",
                   help="step to resume from, -1 for none, latest_if_exists for the newest checkpoint")
    p.add_argument("--num_kept_checkpoint", type=int, default=-1, help="checkpoints kept (-1: all)")
    p.add_argument("--hidden_size", type=int, default=-1, help="hidden size, overriding the config's")
    p.add_argument("--use_flash_attention", default=1, type=int, help="Trainium kernel switch (recorded)")
    p.add_argument("--fuse_qkv", type=int, default=1, help="fused q/k/v projection")
    p.add_argument("--transpose_nki_inputs", type=int, default=1, help="Trainium kernel switch (recorded)")
    return p


def linear_warmup_decay(warmup: int, total: int):
    """transformers' get_linear_schedule_with_warmup as a LambdaLR factor."""
    def factor(step):
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))
    return factor


def main(argv=None):
    a = standin.parse(build_parser(), SCRIPT, known=PARSE_KNOWN, argv=argv)
    if a.steps_this_run is None:
        standin.refuse(SCRIPT, "--steps_this_run is needed (upstream compares it with 0 and fails without it); "
                               "-1 runs to --max_steps")
    if a.max_steps is None:
        standin.refuse(SCRIPT, "--max_steps is needed: it is the length of the learning-rate schedule")
    if a.steps_this_run < 0:
        a.steps_this_run = a.max_steps
    if os.environ.get("RANK", "0") == "0" and not os.path.exists(a.output_dir):
        os.makedirs(a.output_dir, exist_ok=True)
    trainium_only = {k: getattr(a, k) for k in (
        "use_mix_precision", "sequence_parallel_enabled", "selective_checkpoint_enabled", "use_meta_device_init",
        "use_gpu_compatible_precision", "use_flash_attention", "transpose_nki_inputs")}

    def log_step(run, epoch, step, loss, lr_used, lr_next, norm, batch):
        if run.extract or step % a.logging_interval:
            return
        run.last_throughput = run.throughput.get()
        norm_msg = f"grad-norm : {norm}" if a.print_grad_norm and norm else ""
        print(f"LOG {time.asctime()} - ({epoch}, {step}) step_loss : {loss:.4f} learning_rate : {lr_next:.2e} "
              f"throughput : {run.last_throughput:.2f} seq/s {norm_msg}", flush=True)

    def epoch_begin(run, epoch):
        if run.rank == 0:
            print(f"Epoch {epoch} begin {time.asctime()}", flush=True)

    def epoch_end(run, epoch, step, ustep, loss, t0):
        if not run.extract:
            now = time.time()
            print(f"Epoch {epoch} step {step} end {time.asctime()} loss {loss} perf {run.last_throughput} seq/sec "
                  f"(at train microstep {ustep} time {now} from beginning time {t0})", flush=True)

    plan = nxd_trainer.Plan(
        script=SCRIPT, flags=a, model_config=a.model_path, layers_override=a.num_layers,
        hidden_override=a.hidden_size, data_dir=a.data_dir, seq_len=a.seq_len, tp=a.tensor_parallel_size, pp=1,
        cp=a.context_parallel_size, loader_batch=a.batch_size, splits=1, accum=a.grad_accum_usteps,
        step_limit=a.steps_this_run, lr=a.lr, betas=(a.beta1, a.beta2), eps=1e-6, weight_decay=a.weight_decay,
        schedule=linear_warmup_decay(a.warmup_steps, a.max_steps), seed=a.seed, checkpoint_dir=a.checkpoint_dir,
        checkpoint_freq=a.checkpoint_freq, num_kept=a.num_kept_checkpoint, loading_step=a.loading_step,
        load_pretrained=a.pretrained_weight, xser=True, zero1=a.use_zero_1,
        layout_flags={"qkv_linear": a.qkv_linear, "fuse_qkv": a.qkv_linear and a.fuse_qkv > 0,
                      "coalesce_qkv": not a.qkv_linear and a.fuse_qkv > 0 and a.kv_replicator == 1,
                      "kv_size_multiplier": a.kv_replicator if a.qkv_linear else 1},
        graph_switches={**trainium_only, "use_zero_1": a.use_zero_1, "qkv_linear": a.qkv_linear,
                        "kv_replicator": a.kv_replicator, "fuse_qkv": a.fuse_qkv, "weight_decay": a.weight_decay,
                        "betas": [a.beta1, a.beta2], "grad_accum_usteps": a.grad_accum_usteps},
        accepted_only=trainium_only,
        user_content=lambda epoch, step, batch_idx: {"epoch": epoch, "global_step": step, "cli_args": vars(a)},
        resume_step=lambda uc: uc["global_step"],
        log_step=log_step, print_rank=lambda tp, cp, dp, pp, pp_size: tp == 0 and cp == 0 and dp == 0 and pp == 0,
        epoch_begin=epoch_begin, epoch_end=epoch_end, finished=lambda run: None,
        logging_interval=a.logging_interval, metrics_file=a.metrics_file)
    nxd_trainer.Run(plan).train()


if __name__ == "__main__":
    main()
