"""Config registry of `--module torchtitan_neuron.models.llama3` in the CPU stand-in.

The Neuron documentation's SimpleFSDP tutorial trains Llama 3.1 8B; its config names are not
published, so llama3_8b carries upstream's name for that model with FSDP over every rank (the
record's defaults otherwise). On CPUs it needs TRNSLURM_STANDIN_TINY_MODEL=1. llama3_tiny_cpu is
the stand-in's own, for tests."""

from torchtitan.config import trainer_config


def llama3_8b():
    return trainer_config("llama3", "8B", lr=3e-4, parallelism__data_parallel_shard_degree=-1)


def llama3_tiny_cpu():
    return trainer_config("llama3", "tiny", lr=1e-3,
                          hf_assets_path="./tests/assets/tokenizer",
                          training__local_batch_size=2, training__seq_len=32, training__steps=10,
                          lr_scheduler__warmup_steps=2, metrics__log_freq=1, checkpoint__interval=5)
