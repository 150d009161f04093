"""The digits vit-tiny trains on by default ship with toy: the 1,797 UCI test
digits, the same arrays scikit-learn's bundled copy gives, with no
scikit-learn (nor Pillow) installed."""

import gzip
import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from toy.datasets.images import load_digits

# sha256 of images.tobytes() + labels.tobytes() (float32, int32), as the
# loader gave them when it read scikit-learn's copy
DIGITS_SHA256 = "cf7e26e57b05ca0df6c8c74907284c3304259880cb7ebc523919b068a1ba6454"


def test_the_digits_are_the_uci_test_set():
    data = load_digits()
    assert data.images.shape == (1797, 8, 8, 1) and data.images.dtype == np.float32
    assert data.labels.dtype == np.int32
    assert np.bincount(data.labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert data.images.min() == 0 and data.images.max() == 1
    assert data.classes == [str(d) for d in range(10)]
    assert hashlib.sha256(data.images.tobytes() + data.labels.tobytes()).hexdigest() == DIGITS_SHA256


def test_the_digits_equal_scikit_learns_copy():
    spec = importlib.util.find_spec("sklearn")
    if spec is None:
        pytest.skip("scikit-learn is not installed: nothing to compare with")
    path = Path(spec.submodule_search_locations[0]) / "datasets/data/digits.csv.gz"
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    data = load_digits()
    assert np.array_equal(data.images, (table[:, :64] / 16.0).reshape(-1, 8, 8, 1))
    assert np.array_equal(data.labels, table[:, 64].astype(np.int32))


def test_the_digits_load_without_scikit_learn_or_pillow():
    # both made unimportable: the default data must not need either
    code = (
        "import sys; sys.modules['sklearn'] = None; sys.modules['PIL'] = None\n"
        "from toy.datasets.images import load_digits\n"
        "print(len(load_digits().labels))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1797"
