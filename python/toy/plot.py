"""A loss curve as a small self-contained SVG (no plotting dependency)."""
from __future__ import annotations

import math


def loss_svg(losses: list[float], title: str = "training loss") -> str:
    width, height, pad = 640, 360, 48
    finite = [x for x in losses if math.isfinite(x)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    n = max(len(losses) - 1, 1)

    def xy(i: int, loss: float) -> str:
        x = pad + (width - 2 * pad) * i / n
        y = height - pad - (height - 2 * pad) * (loss - lo) / (hi - lo)
        return f"{x:.1f},{y:.1f}"

    points = " ".join(xy(i, x) for i, x in enumerate(losses) if math.isfinite(x))
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle">{title}</text>',
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
        f'<text x="{pad - 4}" y="{pad + 4}" text-anchor="end">{hi:.3f}</text>',
        f'<text x="{pad - 4}" y="{height - pad}" text-anchor="end">{lo:.3f}</text>',
        f'<text x="{width - pad}" y="{height - pad + 16}" text-anchor="end">step {len(losses)}</text>',
        f'<text x="{pad}" y="{height - pad + 16}">step 1</text>',
        f'<polyline fill="none" stroke="steelblue" stroke-width="2" points="{points}"/>',
        "</svg>",
        "",
    ])
