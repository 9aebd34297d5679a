#!/usr/bin/bash
# run_train.sh of the TorchTitan stand-in, with upstream's variables (run_train.sh at c82675eb6):
# NGPU workers on this node, LOG_RANK the local ranks shown, MODULE and CONFIG the config
# selection, every other argument an override. COMM_MODE is not implemented here.
set -e
NGPU=${NGPU:-"8"}
export LOG_RANK=${LOG_RANK:-0}
MODULE=${MODULE:-"torchtitan_neuron.models.qwen3"}
CONFIG=${CONFIG:-"qwen3_tiny_cpu"}
cd "$(dirname "$0")"
torchrun --nproc_per_node="${NGPU}" --rdzv_backend c10d --rdzv_endpoint="localhost:0" \
    --local-ranks-filter "${LOG_RANK}" --role rank --tee 3 \
    -m torchtitan.train --module "${MODULE}" --config "${CONFIG}" "$@"
