"""Images for the ViT recipe: the handwritten digits toy ships (no download)
or a folder per class of image files (Pillow); patches; a fixed held-out
split.

Images are float32 arrays (N, H, W, C) with values in [0, 1].

A folder of images is hostile input (downloaded, or a crawl's leftovers),
so it is read in two passes. scan_folder reads every file's header only
(Image.open is lazy): its size and mode, checked against MAX_PIXELS, so
that no picture is decoded before the sizes of all are known and the memory
of the whole set can be planned (toy.core.machine.check_fits) -- a huge
--image-size or a "decompression bomb" (20000 x 20000 pixels in a few
kilobytes) is refused in one line instead of meeting the out-of-memory
killer. FolderScan.load then decodes one picture at a time, converts and
resizes it at once and keeps only its float32 array. Whatever Pillow raises
on a truncated or corrupt file becomes one line naming the file, with what
its C libraries print on stderr themselves (libtiff does) folded into it;
names are quoted with their escapes where a line break or undecodable bytes
would break that line.
"""

from __future__ import annotations

import gzip
import os
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ..core.errors import InputError, c_stderr_captured
from ..core.machine import check_fits
from ..formats.gguf_file import one_line

DIGITS_SIZE = 8  # the digits are 8 x 8 greyscale, values 0..16
DIGITS_COUNT = 1797
# the held-out split does not depend on --seed: the same images are held out in every run
SPLIT_SEED = 20261123
# Pillow modes with one channel
GREY_MODES = {"1", "L", "LA", "La", "I", "I;16", "I;16L", "I;16B", "I;16N", "F"}
# Pillow modes of more than 8 bits: integers scaled from 0..65535 (16-bit
# PNG and TIFF), floats taken as they are; both clipped to [0, 1]
DEEP_MODES = {"I", "I;16", "I;16L", "I;16B", "I;16N", "F"}
# The largest picture read, width x height: 64 megapixels (8192 x 8192),
# more than any camera's photo, and below Pillow's own "decompression bomb"
# threshold (89 megapixels, a warning; twice that, an error), which toy
# replaces by this check. Decoding one takes at most 256 MB (4 bytes a pixel).
MAX_PIXELS = 8192 * 8192
# The formats read: the common ones. Not PostScript (Pillow runs Ghostscript
# on it) nor the exotic plugins, which a hostile file could reach.
FORMATS = ("PNG", "JPEG", "GIF", "BMP", "TIFF", "WEBP", "PPM")


@dataclass
class ImageSet:
    images: np.ndarray  # float32 (N, H, W, C) in [0, 1]
    labels: np.ndarray  # int32 (N,)
    classes: list[str]
    name: str

    @property
    def image_size(self) -> int:
        return self.images.shape[1]

    @property
    def channels(self) -> int:
        return self.images.shape[3]


def load_digits() -> ImageSet:
    """The 1,797 8x8 handwritten digits toy ships (10 classes): the test set
    of UCI's "Optical Recognition of Handwritten Digits" (E. Alpaydin and C.
    Kaynak, 1998; CC BY 4.0), the copy scikit-learn bundles too. The file,
    toy/data/digits.u8.gz, holds 65 bytes a digit: its 64 pixels (0..16, row
    by row), then its label (toy/data/DIGITS.md; scripts/make_digits.py)."""
    raw = gzip.decompress((resources.files("toy") / "data" / "digits.u8.gz").read_bytes())
    table = np.frombuffer(raw, dtype=np.uint8).reshape(DIGITS_COUNT, DIGITS_SIZE**2 + 1)
    images = (table[:, :-1].astype(np.float32) / 16.0).reshape(-1, DIGITS_SIZE, DIGITS_SIZE, 1)
    return ImageSet(images, table[:, -1].astype(np.int32), [str(d) for d in range(10)], "digits")


def _pillow():
    try:
        from PIL import Image
    except ImportError:
        raise InputError("--images needs Pillow: pip install pillow") from None
    return Image


@dataclass
class FolderScan:
    """A folder of class folders, every file's header read and checked, no
    picture decoded: what load() will make and how much memory that takes."""

    root: Path
    files: list[Path]
    labels: np.ndarray  # int32, one per file
    classes: list[str]
    image_size: int  # the side of every image once loaded
    channels: int  # 1 (every picture greyscale) or 3
    largest: int  # pixels of the largest picture

    def __len__(self) -> int:
        return len(self.files)

    def image_bytes(self) -> int:
        """One loaded image: float32, image_size x image_size x channels."""
        return 4 * self.image_size**2 * self.channels

    def load_bytes(self) -> int:
        """What load() holds at its peak: the float32 array of the set, the
        largest picture decoded (up to 4 bytes a pixel) and converted, and a
        resized copy."""
        return len(self) * self.image_bytes() + 2 * 4 * self.largest + 2 * self.image_bytes()

    def load(self) -> ImageSet:
        """Decode every picture (the first frame of an animation), convert it
        to greyscale or RGB and resize it, one at a time."""
        Image = _pillow()
        size, grey = self.image_size, self.channels == 1
        images = np.empty((len(self), size, size, self.channels), dtype=np.float32)
        for i, path in enumerate(self.files):
            said: list[str] = []
            try:
                with c_stderr_captured(said, limit=2000), warnings.catch_warnings():
                    # Pillow's warnings (a palette's transparency, its own size
                    # limit) would print on stderr; the sizes are toy's to check
                    warnings.simplefilter("ignore")
                    with Image.open(path, formats=FORMATS) as picture:
                        _check_pixels(path, picture.size)  # the file may have changed since the scan
                        picture.load()
                        images[i] = _pixels(Image, picture, grey, size)
            except InputError:
                raise
            except Exception as err:  # noqa: BLE001 -- Pillow's decoders raise what their parsing meets
                raise InputError(f"cannot read image {shown(path)} ({_why(err, said)})") from None
        return ImageSet(images, self.labels, self.classes, str(self.root))


def scan_folder(root, image_size: int | None = None) -> FolderScan:
    """One sub-folder per class (sorted by name; hidden ones, as .git, are
    not classes), each holding image files, their headers read (see the
    module's docstring). With image_size every image will be resized to
    image_size x image_size; without it they must all be square and of one
    size. Greyscale when every image is, else RGB."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"--images {shown(root)} is not a directory (give a folder with one sub-folder per class)")
    # hidden folders (.git, .ipynb_checkpoints) are not classes, as hidden files are not images
    class_dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if len(class_dirs) < 2:
        raise InputError(f"--images {shown(root)} needs at least two class folders, found {len(class_dirs)}")
    files, labels = [], []
    for label, folder in enumerate(class_dirs):
        found = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
        if not found:
            raise InputError(f"class folder {shown(folder)} has no image files")
        files += found
        labels += [label] * len(found)

    Image = _pillow()
    headers = [_header(Image, path) for path in files]
    grey = all(mode in GREY_MODES for _, mode in headers)
    size = image_size
    if size is None:
        sizes = {wh for wh, _ in headers}
        if len(sizes) > 1:
            a, b = sorted(sizes)[:2]
            raise InputError(
                f"the images under {shown(root)} have different sizes "
                f"({a[0]}x{a[1]}, {b[0]}x{b[1]}, ...): "
                "give --image-size N to resize them all to N x N"
            )
        width, height = sizes.pop()
        if width != height:
            raise InputError(
                f"the images under {shown(root)} are {width}x{height}, not square: "
                "give --image-size N to resize them to N x N"
            )
        size = width
    largest = max(w * h for (w, h), _ in headers)
    return FolderScan(
        root,
        files,
        np.array(labels, dtype=np.int32),
        [class_name(p) for p in class_dirs],
        size,
        1 if grey else 3,
        largest,
    )


def load_folder(root, image_size: int | None = None) -> ImageSet:
    """scan_folder, then load, once the memory of the set is known to fit."""
    scan = scan_folder(root, image_size)
    check_fits(
        scan.load_bytes(),
        f"loading {len(scan):,} images of {scan.image_size:,} x "
        f"{scan.image_size:,} x {scan.channels} (float32) from {shown(scan.root)}",
        "give a smaller --image-size, or fewer images",
    )
    return scan.load()


@contextmanager
def _pillow_limit_lifted(Image):
    """Pillow's own size check off while a header is read: toy checks the
    size itself, at once, against MAX_PIXELS (below Pillow's threshold), and
    names the file and its size where Pillow would raise without them."""
    saved, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = saved


def _header(Image, path: Path) -> tuple[tuple[int, int], str]:
    """((width, height), mode) of an image file, from its header alone."""
    said: list[str] = []
    try:
        if path.stat().st_size == 0:
            raise InputError(f"cannot read image {shown(path)}: the file is empty")
        with _pillow_limit_lifted(Image), c_stderr_captured(said, limit=2000), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(path, formats=FORMATS) as picture:
                size, mode = picture.size, picture.mode
    except InputError:
        raise
    except Image.UnidentifiedImageError:
        raise InputError(
            f"cannot read image {shown(path)}: not an image file toy reads ({', '.join(FORMATS)})"
        ) from None
    except Exception as err:  # noqa: BLE001 -- as in FolderScan.load
        raise InputError(f"cannot read image {shown(path)} ({_why(err, said)})") from None
    _check_pixels(path, size)
    return size, mode


def _why(err: Exception, said: list[str]) -> str:
    """What Pillow raised, in one line, and what its C library printed, if anything."""
    why = f"{type(err).__name__}: {one_line(err)}"
    printed = one_line(" ".join(said))
    return f"{why}; {printed}" if printed else why


def class_name(folder: Path) -> str:
    """A class folder's name as the model's class name. A name that is not
    UTF-8 (a zip made with Latin-1 names) keeps its bytes as \\xNN escapes:
    the class names go into the GGUF and config.json, which hold text only."""
    return os.fsencode(folder.name).decode("utf-8", "backslashreplace")


def shown(path) -> str:
    """A path for a one-line message: as it is, or quoted with its line
    breaks, tabs and undecodable bytes escaped -- the names in a downloaded
    folder are anyone's, and a line break in one would split the message."""
    text = str(path)
    return text if text.isprintable() else repr(text)


def _check_pixels(path: Path, size: tuple[int, int]) -> None:
    width, height = size
    if width < 1 or height < 1:
        raise InputError(f"image {shown(path)} is {width}x{height} pixels: it has none")
    if width * height > MAX_PIXELS:
        raise InputError(
            f"image {shown(path)} is {width}x{height} pixels ({width * height:,}), "
            f"more than the {MAX_PIXELS:,} (8192 x 8192) toy reads in one picture"
        )


def _pixels(Image, picture, grey: bool, size: int) -> np.ndarray:
    """A decoded picture as float32 (size, size, 1 or 3) in [0, 1]."""
    channels = 1 if grey else 3
    if picture.mode in DEEP_MODES:
        scale = 1.0 if picture.mode == "F" else 65535.0
        picture = picture if picture.mode == "F" else picture.convert("I").convert("F")
        if picture.size != (size, size):
            picture = picture.resize((size, size), Image.BILINEAR)
        x = np.nan_to_num(np.asarray(picture, dtype=np.float32) / scale, nan=0.0)
        x = np.clip(x, 0.0, 1.0)[..., None]
        return np.repeat(x, channels, axis=2) if channels == 3 else x
    picture = picture.convert("L" if grey else "RGB")
    if picture.size != (size, size):
        picture = picture.resize((size, size), Image.BILINEAR)
    return np.asarray(picture, dtype=np.float32).reshape(size, size, channels) / 255.0


def to_patches(images: np.ndarray, patch: int) -> np.ndarray:
    """(N, H, W, C) in [0, 1] -> (N, (H/patch)(W/patch), patch*patch*C) in [-1, 1]:
    patches in row-major order, each flattened row by row, channels last."""
    n, h, w, c = images.shape
    x = images.reshape(n, h // patch, patch, w // patch, patch, c).transpose(0, 1, 3, 2, 4, 5)
    return np.ascontiguousarray(
        (x.reshape(n, (h // patch) * (w // patch), patch * patch * c) - 0.5) / 0.5, dtype=np.float32
    )


def held_out_split(n: int, fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out) indices: a fixed shuffle, the last `fraction` held out."""
    order = np.random.default_rng(SPLIT_SEED).permutation(n)
    n_eval = int(round(n * fraction))
    return np.sort(order[: n - n_eval]), np.sort(order[n - n_eval :])
