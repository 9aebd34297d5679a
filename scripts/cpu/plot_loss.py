#!/usr/bin/python3
"""The loss curve of a training log (JSON lines from train.py) as an SVG picture, with no
plotting library: a line of loss against optimizer step, axes and a few labels."""

import argparse
import json
from pathlib import Path


def points(log: Path):
    by_step = {}
    for line in log.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("event") == "step":
            by_step[rec["step"]] = rec["loss"]  # a resumed run rewrites steps: keep the last
    return sorted(by_step.items())


def svg(data, title):
    w, h, m = 640, 360, 50
    steps = [s for s, _ in data]
    losses = [l for _, l in data]
    x0, x1 = min(steps), max(steps)
    y0, y1 = min(losses), max(losses)
    xs = lambda s: m + (s - x0) / max(1, x1 - x0) * (w - 2 * m)
    ys = lambda l: h - m - (l - y0) / max(1e-9, y1 - y0) * (h - 2 * m)
    path = " ".join(f"{'M' if i == 0 else 'L'}{xs(s):.1f},{ys(l):.1f}" for i, (s, l) in enumerate(data))
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">
<rect width="{w}" height="{h}" fill="white"/>
<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>
<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>
<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>
<text x="{m}" y="{h - m + 16}" text-anchor="middle">{x0}</text>
<text x="{w - m}" y="{h - m + 16}" text-anchor="middle">{x1}</text>
<text x="{w / 2}" y="{h - 12}" text-anchor="middle">optimizer step</text>
<text x="{m - 6}" y="{h - m}" text-anchor="end">{y0:.2f}</text>
<text x="{m - 6}" y="{m + 4}" text-anchor="end">{y1:.2f}</text>
<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">loss</text>
<path d="{path}" fill="none" stroke="#1f77b4" stroke-width="2"/>
</svg>
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("log")
    ap.add_argument("out")
    a = ap.parse_args()
    data = points(Path(a.log))
    if len(data) < 2:
        raise SystemExit(f"{a.log}: fewer than two logged steps, nothing to plot")
    Path(a.out).write_text(svg(data, f"training loss, {data[0][1]:.3f} -> {data[-1][1]:.3f}"))
    print(f"loss curve: {a.out}")


if __name__ == "__main__":
    main()
