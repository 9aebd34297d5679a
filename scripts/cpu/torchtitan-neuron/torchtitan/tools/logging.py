"""The trainer's log lines as upstream's tools/logging.py formats them (the record's
torchtitan.log.line_format, on the root logger), behind the prefix torchrun adds to every line of
a worker with `--role rank --tee 3` ([rank<N>]:, N the global rank) and the rank filter of
`--local-ranks-filter`. The CPU stand-in's torchrun (scripts/cpu/torchtitan-venv/bin/torchrun)
hands both to the workers as TRNSLURM_STANDIN_RANK_PREFIX (the role) and
TRNSLURM_STANDIN_LOG_RANKS (local ranks shown); without them every rank prints, unprefixed, as
a worker does under plain torchrun."""

import logging
import os
import sys

from torchtitan.config.job import record

logger = logging.getLogger()


def shown() -> bool:
    ranks = os.environ.get("TRNSLURM_STANDIN_LOG_RANKS", "")
    return not ranks or os.environ.get("LOCAL_RANK", "0") in ranks.split(",")


def init_logger():
    logger.setLevel(logging.INFO)
    handler = logging.StreamHandler(sys.stdout)
    role = os.environ.get("TRNSLURM_STANDIN_RANK_PREFIX", "")
    prefix = f"[{role}{os.environ.get('RANK', '0')}]:" if role else ""
    handler.setFormatter(logging.Formatter(prefix + record()["torchtitan"]["log"]["line_format"]))
    if not shown():
        handler.setLevel(logging.CRITICAL + 1)
    logger.handlers[:] = [handler]
