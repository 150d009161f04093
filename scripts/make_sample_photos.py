"""Writes python/toy/data/samples/photos/: two classes of small grey pictures
(rings and crosses, each drawn at a random place, size and stroke, with
noise) for `toy-train vit-tiny --images photos/`. Deterministic: run it again
and the files are the same bytes. Needs numpy and Pillow (toy's [vision]).

    python scripts/make_sample_photos.py
"""

from pathlib import Path

import numpy as np
from PIL import Image

SIZE, PER_CLASS = 32, 16
OUT = Path(__file__).resolve().parent.parent / "python/toy/data/samples/photos"


def ring(rng, y, x) -> np.ndarray:
    cy, cx = rng.uniform(11, 21, 2)
    radius, width = rng.uniform(6, 10), rng.uniform(1.2, 2.5)
    return np.abs(np.hypot(y - cy, x - cx) - radius) < width


def cross(rng, y, x) -> np.ndarray:
    cy, cx = rng.uniform(11, 21, 2)
    arm, width = rng.uniform(6, 10), rng.uniform(1.2, 2.5)
    horizontal = (np.abs(y - cy) < width) & (np.abs(x - cx) < arm)
    vertical = (np.abs(x - cx) < width) & (np.abs(y - cy) < arm)
    return horizontal | vertical


def main() -> None:
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    for name, draw in (("ring", ring), ("cross", cross)):
        folder = OUT / name
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(PER_CLASS):
            picture = 30 + 190 * draw(rng, y, x) + rng.normal(0, 12, (SIZE, SIZE))
            pixels = np.clip(picture, 0, 255).astype(np.uint8)
            Image.fromarray(pixels, mode="L").save(folder / f"{name}-{i:02d}.png", optimize=True)
    print(f"wrote {2 * PER_CLASS} pictures to {OUT}")


if __name__ == "__main__":
    main()
