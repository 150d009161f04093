"""Writes python/toy/data/digits.u8.gz, the 1,797 8x8 handwritten digits that
`toy-train vit-tiny` trains on by default, from the UCI "Optical Recognition
of Handwritten Digits" test set (optdigits.tes: one digit a line, 64 pixel
counts 0..16 row by row, then the label, comma-separated; CC BY 4.0, E.
Alpaydin and C. Kaynak, 1998; see python/toy/data/DIGITS.md).

    python scripts/make_digits.py [optdigits.tes or a gzip of it]

Without an argument it reads the copy scikit-learn bundles
(sklearn/datasets/data/digits.csv.gz, the same lines), found without
importing scikit-learn. The output is the table as bytes, 65 a digit
(pixels, then label), gzipped without a timestamp: run it again and the file
is the same bytes. Needs only numpy.
"""

import gzip
import importlib.util
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "python/toy/data/digits.u8.gz"
COUNT, PIXELS = 1797, 64


def bundled_copy() -> Path:
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("make_digits: give the path of optdigits.tes (scikit-learn, whose copy is the default, is missing)")
    return Path(spec.submodule_search_locations[0]) / "datasets/data/digits.csv.gz"


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else bundled_copy()
    opener = gzip.open if source.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(source, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int64, ndmin=2)
    pixels, labels = table[:, :PIXELS], table[:, PIXELS]
    if table.shape != (COUNT, PIXELS + 1) or pixels.min() < 0 or pixels.max() > 16 or set(labels) != set(range(10)):
        sys.exit(f"make_digits: {source} is not the UCI digits test set ({table.shape[0]} lines)")
    OUT.write_bytes(gzip.compress(table.astype(np.uint8).tobytes(), compresslevel=9, mtime=0))
    print(f"{OUT}: {COUNT} digits from {source}, {OUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
