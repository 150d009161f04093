"""Images for the ViT recipe: scikit-learn's handwritten digits (the file
scikit-learn bundles, read without importing it; no download) or a folder
per class of image files (Pillow); patches; a fixed held-out split.

Images are float32 arrays (N, H, W, C) with values in [0, 1]."""
from __future__ import annotations

import gzip
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError

DIGITS_SIZE = 8          # the digits are 8 x 8 greyscale, values 0..16
# the held-out split does not depend on --seed: the same images are held out in every run
SPLIT_SEED = 20261123
# Pillow modes with one channel
GREY_MODES = {"1", "L", "LA", "I", "I;16", "F"}


@dataclass
class ImageSet:
    images: np.ndarray       # float32 (N, H, W, C) in [0, 1]
    labels: np.ndarray       # int32 (N,)
    classes: list[str]
    name: str

    @property
    def image_size(self) -> int:
        return self.images.shape[1]

    @property
    def channels(self) -> int:
        return self.images.shape[3]


def load_digits() -> ImageSet:
    """The 1,797 8x8 handwritten digits that scikit-learn ships (10 classes)."""
    spec = importlib.util.find_spec("sklearn")
    path = Path(spec.submodule_search_locations[0]) / "datasets/data/digits.csv.gz" if spec else None
    if path is None or not path.is_file():
        raise InputError("the digits data comes with scikit-learn: pip install scikit-learn "
                         "(or give --images DIR)")
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    images = (table[:, :64] / 16.0).reshape(-1, DIGITS_SIZE, DIGITS_SIZE, 1)
    return ImageSet(images, table[:, 64].astype(np.int32), [str(d) for d in range(10)], "digits")


def load_folder(root, image_size: int | None = None) -> ImageSet:
    """One sub-folder per class (sorted by name), each holding image files.
    With image_size every image is resized to image_size x image_size;
    without it they must all be square and of one size. Greyscale when
    every image is, else RGB."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise InputError("--images needs Pillow: pip install pillow") from None
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"--images {root} is not a directory (give a folder with one sub-folder per class)")
    class_dirs = sorted(p for p in root.iterdir() if p.is_dir())
    if len(class_dirs) < 2:
        raise InputError(f"--images {root} needs at least two class folders, found {len(class_dirs)}")
    files, labels = [], []
    for label, folder in enumerate(class_dirs):
        found = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
        if not found:
            raise InputError(f"class folder {folder} has no image files")
        files += found
        labels += [label] * len(found)

    pictures = []
    for path in files:
        try:
            with Image.open(path) as picture:
                picture.load()
                pictures.append(picture.copy())
        except (UnidentifiedImageError, OSError, ValueError) as err:
            raise InputError(f"cannot read image {path}: {err}") from None
    grey = all(p.mode in GREY_MODES for p in pictures)
    size = image_size
    if size is None:
        sizes = {p.size for p in pictures}
        if len(sizes) > 1:
            a, b = sorted(sizes)[:2]
            raise InputError(f"the images under {root} have different sizes ({a[0]}x{a[1]}, {b[0]}x{b[1]}, ...): "
                             "give --image-size N to resize them all to N x N")
        width, height = sizes.pop()
        if width != height:
            raise InputError(f"the images under {root} are {width}x{height}, not square: "
                             "give --image-size N to resize them to N x N")
        size = width
    arrays = []
    for picture in pictures:
        picture = picture.convert("L" if grey else "RGB")
        if picture.size != (size, size):
            picture = picture.resize((size, size), Image.BILINEAR)
        arrays.append(np.asarray(picture, dtype=np.float32).reshape(size, size, -1) / 255.0)
    return ImageSet(np.stack(arrays), np.array(labels, dtype=np.int32),
                    [p.name for p in class_dirs], str(root))


def to_patches(images: np.ndarray, patch: int) -> np.ndarray:
    """(N, H, W, C) in [0, 1] -> (N, (H/patch)(W/patch), patch*patch*C) in [-1, 1]:
    patches in row-major order, each flattened row by row, channels last."""
    n, h, w, c = images.shape
    x = images.reshape(n, h // patch, patch, w // patch, patch, c).transpose(0, 1, 3, 2, 4, 5)
    return np.ascontiguousarray((x.reshape(n, (h // patch) * (w // patch), patch * patch * c) - 0.5) / 0.5,
                                dtype=np.float32)


def held_out_split(n: int, fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out) indices: a fixed shuffle, the last `fraction` held out."""
    order = np.random.default_rng(SPLIT_SEED).permutation(n)
    n_eval = int(round(n * fraction))
    return np.sort(order[: n - n_eval]), np.sort(order[n - n_eval:])
