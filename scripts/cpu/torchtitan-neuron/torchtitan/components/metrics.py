"""The step line as upstream's MetricsProcessor.log prints it, rendered from the record's pieces:
colours from the record unless --metrics.disable_color_printing; tps per device (tokens this rank
processed per second, divided by the non-data-parallel degree); memory is this process's peak RSS
on CPU; mfu is N/A (no peak FLOPS for a CPU)."""

import logging
import os
import resource
import time

from torchtitan.config.job import record

logger = logging.getLogger()


def step_pieces():
    """The step line's pieces in the record (literal text, or a field with its format spec)."""
    r = record()
    return r["log_formats"][r["torchtitan"]["log"]["step_key"]]["pieces"]


def render(pieces, values):
    """The line the pieces give with these values; a field the stand-in does not know is an error,
    so a record whose line changed cannot be printed the old way."""
    out = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece)
        elif piece["field"] not in values:
            raise KeyError(f"the record's step line has a field the CPU stand-in does not compute: {piece['field']}")
        else:
            out.append(format(values[piece["field"]], piece.get("spec", "")))
    return "".join(out)


class MetricsProcessor:
    def __init__(self, config, non_data_parallel_size, flops_per_token):
        self.log_freq = config.metrics.log_freq
        colors = record()["torchtitan"]["log"]["colors"]
        self.color = {k: "" if config.metrics.disable_color_printing else v for k, v in colors.items()}
        self.non_dp = non_data_parallel_size
        self.flops_per_token = flops_per_token
        self.ntokens_since_last_log = 0
        self.time_last_log = time.perf_counter()

    def should_log(self, step: int) -> bool:
        return step == 1 or step % self.log_freq == 0

    def log(self, step, global_avg_loss, grad_norm):
        delta = max(time.perf_counter() - self.time_last_log, 1e-9)
        tps = self.ntokens_since_last_log / (delta * self.non_dp)
        tflops = self.flops_per_token * tps / 1e12
        gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        values = {f"color.{name}": code for name, code in self.color.items()}
        values.update({"step": step, "global_avg_loss": global_avg_loss, "grad_norm": grad_norm,
                       "device_mem_stats.max_reserved_gib": gib,
                       "device_mem_stats.max_reserved_pct": 100 * gib / total,
                       "round(tps)": round(tps), "tflops": tflops, "mfu_str": "N/A"})
        logger.info(render(step_pieces(), values))
        self.ntokens_since_last_log = 0
        self.time_last_log = time.perf_counter()
