"""Config registry of `--module torchtitan_neuron.models.qwen3` in the CPU stand-in.

qwen3_8b_tp4_fsdp16_sac is the reference configuration of the Neuron documentation's basic
TorchTitan tutorial (Neuron 2.33): Qwen3-8B, tensor-parallel degree 4, data-parallel shard degree
-1 (FSDP over the other ranks), selective activation checkpointing, eager. Its batch, sequence
length and steps are not published: the record's defaults stand. On CPUs it needs
TRNSLURM_STANDIN_TINY_MODEL=1 (tiny dimensions, the rest unchanged). qwen3_tiny_cpu is the
stand-in's own, for tests."""

from torchtitan.config import trainer_config


def qwen3_8b_tp4_fsdp16_sac():
    return trainer_config("qwen3", "8B", lr=3e-4,
                          parallelism__tensor_parallel_degree=4, parallelism__data_parallel_shard_degree=-1)


def qwen3_tiny_cpu():
    return trainer_config("qwen3", "tiny", lr=1e-3,
                          hf_assets_path="./tests/assets/tokenizer",
                          training__local_batch_size=2, training__seq_len=32, training__steps=10,
                          lr_scheduler__warmup_steps=2, metrics__log_freq=1, checkpoint__interval=5)
