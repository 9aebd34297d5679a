"""Upstream's LR schedule (components/optimizer/lr_scheduler.py at c82675eb6): linear warmup over
warmup_steps (capped at the total), a stable phase, then decay over round(total x decay_ratio)
steps (all the rest when decay_ratio is None) of type linear, sqrt or cosine down to
min_lr_factor; a LambdaLR factor, stepped once per optimizer step."""

import functools
import logging
import math

from torch.optim.lr_scheduler import LambdaLR

logger = logging.getLogger()


def factor(current_step, warmup_steps, stable_steps, decay_steps, decay_type, min_lr_factor):
    if current_step < warmup_steps:
        return float((current_step + 1) / warmup_steps)
    if current_step < warmup_steps + stable_steps:
        return 1.0
    progress = float(current_step + 1 - warmup_steps - stable_steps) / decay_steps
    if decay_type == "linear":
        adjustment = 1 - progress
    elif decay_type == "sqrt":
        adjustment = 1 - math.sqrt(progress)
    else:
        adjustment = 0.5 * (1.0 + math.cos(math.pi * progress))
    return min_lr_factor + (1 - min_lr_factor) * adjustment


def build(optimizer, c, training_steps):
    total = c.total_steps if c.total_steps is not None else training_steps
    warmup = int(c.warmup_steps)
    if warmup > total:
        logger.warning(f"Warmup steps ({warmup}) exceed total steps ({total}). Adjusting warmup steps to {total}.")
        warmup = total
    if c.decay_ratio is not None:
        decay = round(total * c.decay_ratio)
        if warmup + decay > total:
            logger.warning(f"Warmup ({warmup}) + decay ({decay}) steps exceed total steps ({total}). "
                           f"Adjusting decay steps to {total - warmup}.")
            decay = total - warmup
    else:
        decay = total - warmup
    stable = total + 1 - warmup - decay
    return LambdaLR(optimizer, functools.partial(factor, warmup_steps=warmup, stable_steps=stable, decay_steps=decay,
                                                 decay_type=c.decay_type, min_lr_factor=c.min_lr_factor))
