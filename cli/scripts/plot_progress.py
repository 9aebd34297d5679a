"""Draws a training run's progress for `trnslurm report` (docs/progress.md): loss, learning rate
and throughput against the optimizer step, one line per attempt, restarts marked. Compiled into
trnslurm (cli/CMakeLists.txt) and run as `/usr/bin/python3 -c <this> DATA PNG SVG` with Debian's
python3-matplotlib; DATA is the JSON the command wrote beside the pictures."""

import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on a head node
import matplotlib.pyplot as plt  # noqa: E402


def series(points, column):
    """(steps, values) per attempt, leaving out points without the value."""
    by_attempt = {}
    for p in points:
        if p[column] is not None:
            steps, values = by_attempt.setdefault(p[0], ([], []))
            steps.append(p[1])
            values.append(p[column])
    return [by_attempt[a] for a in sorted(by_attempt)]


def main(data_path, png, svg):
    with open(data_path, encoding="utf-8") as f:
        data = json.load(f)
    panels = [("loss", 2, "loss", False), ("learning rate", 3, "learning rate", True),
              ("throughput", 4, "tokens/s", False)]
    panels = [p for p in panels if any(s for s, _ in series(data["points"], p[1]))]
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(9, 2.6 * len(panels) + 0.8), squeeze=False)
    for ax, (title, column, unit, log_scale) in zip(axes[:, 0], panels):
        for i, (steps, values) in enumerate(series(data["points"], column)):
            ax.plot(steps, values, linewidth=1.2, color=f"C{i % 10}",
                    label=f"attempt {i + 1}" if data["attempts"] > 1 else None)
        if log_scale and all(v > 0 for _, vs in series(data["points"], column) for v in vs):
            ax.set_yscale("log")
        ax.set_ylabel(unit)
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(True, alpha=0.3)
        for r in data["restarts"]:
            ax.axvline(r["step"], color="red", linestyle="--", linewidth=1)
        if data["attempts"] > 1:
            ax.legend(fontsize=8, loc="upper right")
    top = axes[0, 0]
    for r in data["restarts"]:
        top.annotate(r["label"], xy=(r["step"], 1.0), xycoords=("data", "axes fraction"), rotation=90,
                     va="top", ha="right", fontsize=8, color="red")
    bottom = axes[-1, 0]
    bottom.set_xlabel("optimizer step")
    if data.get("total_steps"):
        bottom.set_xlim(0, data["total_steps"])
    fig.suptitle(data["title"], fontsize=11)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    fig.savefig(svg)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: plot_progress DATA PNG SVG")
    main(*sys.argv[1:])
