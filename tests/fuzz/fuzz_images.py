"""Image folders as fuzz input: the DIR of `toy-train vit-tiny --images DIR`,
as a download or a crawl's leftovers may hold it. Such a folder is the one
input of toy made by many files from many programs, and Pillow's decoders,
which toy hands every file to, raise whatever their parsing meets.

Each case writes a folder of class folders holding small valid pictures in
the formats and modes toy reads (PNG L/RGB/RGBA/LA/1-bit/16-bit/palette with
transparency/interlaced/animated, JPEG grey/CMYK/progressive, animated GIF,
BMP, TIFF float/16-bit/multi-page/LZW/JPEG-compressed, WEBP lossy and
lossless, PPM/PGM/PBM) and in two it does not (ICO, TGA), in one size or
many, and then spoils it:

  - damaged files: cut short, bytes overwritten, headers that claim huge
    or zero sizes (with a valid PNG CRC, so that Pillow believes them),
    empty files, text and random bytes named .png, a real 64-megapixel
    "decompression bomb" of a few kilobytes;
  - an odd layout: one class or none, empty classes, nested folders, files
    at the top, hidden files and folders, symlinks (to a picture, to a
    class, in a loop, dangling, to /dev/zero), a FIFO, names with line
    breaks, tabs, non-UTF-8 bytes or 200 characters;
  - odd options: --image-size from 1 to past its bound, --patch that may
    not divide it, a held-out split that leaves nothing, a batch larger
    than the set.

It then trains one step of a tiny ViT on it: a folder that reads trains,
anything else is refused in one line naming the file and the fix. (The
harness sees what Python writes on stderr, not what a C library writes on
fd 2 itself, as libtiff does: tests/test_image_input.py runs such a file as
a user does.)
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import zlib

NAME = "images"

BASE = ["--steps", "1", "--batch", "2", "--d-model", "16", "--layers", "1", "--out", "run"]


# ---- valid pictures ----------------------------------------------------------


def _picture(rng, mode: str, size: tuple[int, int]):
    """A picture of random pixels in `mode`."""
    import numpy as np
    from PIL import Image

    w, h = size
    if mode == "F":
        # floats as a scanner or a simulation writes them: any range, NaN and infinities
        values = np.frombuffer(rng.randbytes(4 * w * h), dtype=np.float32).copy().reshape(h, w)
        values.flat[: rng.randint(0, 3)] = rng.choice([np.nan, np.inf, -np.inf, 1e30])
        return Image.fromarray(values, "F")
    if mode == "I;16":
        return Image.frombytes("I;16", size, rng.randbytes(2 * w * h))
    rgb = Image.frombytes("RGB", size, rng.randbytes(3 * w * h))
    return rgb if mode == "RGB" else rgb.convert(mode)


def _save(picture, fmt: str, **params) -> bytes:
    out = io.BytesIO()
    picture.save(out, fmt, **params)
    return out.getvalue()


def _png_palette(rng, size):
    picture = _picture(rng, "P", size)
    return _save(picture, "PNG", transparency=rng.randrange(256))


def _animated(rng, size, fmt: str, mode: str):
    frames = [_picture(rng, mode, size) for _ in range(rng.randint(2, 4))]
    return _save(frames[0], fmt, save_all=True, append_images=frames[1:], duration=40, loop=0)


def _tiff_pages(rng, size):
    pages = [_picture(rng, rng.choice(["RGB", "L"]), size) for _ in range(rng.randint(2, 3))]
    return _save(pages[0], "TIFF", save_all=True, append_images=pages[1:])


# name -> (suffix, Pillow format, writer(rng, (w, h)) -> bytes); the name says what it is
WRITERS = {
    "png-L": (".png", "PNG", lambda rng, s: _save(_picture(rng, "L", s), "PNG")),
    "png-RGB": (".png", "PNG", lambda rng, s: _save(_picture(rng, "RGB", s), "PNG")),
    "png-RGBA": (".png", "PNG", lambda rng, s: _save(_picture(rng, "RGBA", s), "PNG")),
    "png-LA": (".png", "PNG", lambda rng, s: _save(_picture(rng, "LA", s), "PNG")),
    "png-1bit": (".png", "PNG", lambda rng, s: _save(_picture(rng, "1", s), "PNG")),
    "png-16bit": (".png", "PNG", lambda rng, s: _save(_picture(rng, "I;16", s), "PNG")),
    "png-palette": (".png", "PNG", _png_palette),
    "png-interlaced": (".png", "PNG", lambda rng, s: _save(_picture(rng, "RGB", s), "PNG", interlace=1)),
    "png-animated": (".png", "PNG", lambda rng, s: _animated(rng, s, "PNG", "RGBA")),
    "jpeg-RGB": (".jpg", "JPEG", lambda rng, s: _save(_picture(rng, "RGB", s), "JPEG")),
    "jpeg-L": (".jpeg", "JPEG", lambda rng, s: _save(_picture(rng, "L", s), "JPEG", quality=30)),
    "jpeg-CMYK": (".jpg", "JPEG", lambda rng, s: _save(_picture(rng, "CMYK", s), "JPEG")),
    "jpeg-progressive": (".jpg", "JPEG", lambda rng, s: _save(_picture(rng, "RGB", s), "JPEG", progressive=True)),
    "gif": (".gif", "GIF", lambda rng, s: _save(_picture(rng, "P", s), "GIF")),
    "gif-animated": (".gif", "GIF", lambda rng, s: _animated(rng, s, "GIF", "P")),
    "bmp-RGB": (".bmp", "BMP", lambda rng, s: _save(_picture(rng, "RGB", s), "BMP")),
    "bmp-1bit": (".bmp", "BMP", lambda rng, s: _save(_picture(rng, "1", s), "BMP")),
    "tiff-RGB": (".tif", "TIFF", lambda rng, s: _save(_picture(rng, "RGB", s), "TIFF")),
    "tiff-float": (".tiff", "TIFF", lambda rng, s: _save(_picture(rng, "F", s), "TIFF")),
    "tiff-16bit": (".tif", "TIFF", lambda rng, s: _save(_picture(rng, "I;16", s), "TIFF")),
    "tiff-pages": (".tif", "TIFF", _tiff_pages),
    # compressed TIFF is decoded by libtiff, C code that a damaged strip reaches
    "tiff-lzw": (".tif", "TIFF", lambda rng, s: _save(_picture(rng, "RGB", s), "TIFF", compression="tiff_lzw")),
    "tiff-jpeg": (".tif", "TIFF", lambda rng, s: _save(_picture(rng, "RGB", s), "TIFF", compression="jpeg")),
    "webp": (".webp", "WEBP", lambda rng, s: _save(_picture(rng, "RGB", s), "WEBP", quality=50)),
    "webp-lossless": (".webp", "WEBP", lambda rng, s: _save(_picture(rng, "RGBA", s), "WEBP", lossless=True)),
    "ppm": (".ppm", "PPM", lambda rng, s: _save(_picture(rng, "RGB", s), "PPM")),
    "pgm": (".pgm", "PPM", lambda rng, s: _save(_picture(rng, "L", s), "PPM")),
    "pbm": (".pbm", "PPM", lambda rng, s: _save(_picture(rng, "1", s), "PPM")),
    # formats Pillow reads and toy does not (FORMATS): refused, never handed to their plugins
    "ico": (".ico", "ICO", lambda rng, s: _save(_picture(rng, "RGBA", s), "ICO")),
    "tga": (".tga", "TGA", lambda rng, s: _save(_picture(rng, "RGB", s), "TGA")),
}


def png_bomb(width: int, height: int) -> bytes:
    """A valid greyscale PNG of width x height black pixels: zeros deflate
    about a thousandfold, so 8192 x 8192 is some 65 kB."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    squeeze = zlib.compressobj(9)
    row = bytes(width + 1)  # filter byte 0, then the pixels
    data = b"".join(squeeze.compress(row) for _ in range(height)) + squeeze.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


# ---- headers that lie about the size ------------------------------------------


def claim_size(data: bytes, fmt: str, width: int, height: int) -> bytes:
    """data with its header claiming width x height (clipped to what the
    format's fields hold), or data unchanged where the header is not found."""
    claim = {
        "PNG": _claim_png,
        "BMP": _claim_bmp,
        "GIF": _claim_gif,
        "JPEG": _claim_jpeg,
        "PPM": _claim_ppm,
        "TIFF": _claim_tiff,
        "WEBP": _claim_webp,
    }.get(fmt)
    try:
        return claim(bytearray(data), width, height) if claim else data
    except (ValueError, IndexError, struct.error):  # cut or flipped already: nothing to claim
        return data


def _claim_png(data, width, height):
    # IHDR is the first chunk; its CRC is made again so that Pillow reads the lie
    data[16:24] = struct.pack(">II", width % 2**32, height % 2**32)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


def _claim_bmp(data, width, height):
    # BITMAPINFOHEADER: signed 32-bit width and height (negative height: top-down)
    struct.pack_into("<ii", data, 18, min(width, 2**31 - 1), min(height, 2**31 - 1))
    return bytes(data)


def _claim_gif(data, width, height):
    struct.pack_into("<HH", data, 6, min(width, 65535), min(height, 65535))  # the logical screen
    return bytes(data)


def _claim_jpeg(data, width, height):
    at = 2
    while data[at] == 0xFF:
        marker, length = data[at + 1], struct.unpack_from(">H", data, at + 2)[0]
        if marker in (0xC0, 0xC1, 0xC2):  # start of frame: precision, height, width
            struct.pack_into(">HH", data, at + 5, min(height, 65535), min(width, 65535))
            return bytes(data)
        at += 2 + length
    return bytes(data)


def _claim_ppm(data, width, height):
    magic, rest = bytes(data[:2]), bytes(data[3:])
    fields = 1 if magic == b"P4" else 2  # after the size: maxval, then pixels (P4: no maxval)
    tail = rest.split(b"\n", fields)[-1]
    maxval = b"" if magic == b"P4" else rest.split(b"\n", 2)[1] + b"\n"
    return magic + b"\n%d %d\n" % (width, height) + maxval + tail


def _claim_tiff(data, width, height):
    # Pillow writes little-endian TIFF: the first IFD's ImageWidth (256) and ImageLength (257)
    ifd = struct.unpack_from("<I", data, 4)[0]
    for i in range(struct.unpack_from("<H", data, ifd)[0]):
        entry = ifd + 2 + 12 * i
        tag = struct.unpack_from("<H", data, entry)[0]
        if tag in (256, 257):
            value = min(width if tag == 256 else height, 2**32 - 1)
            struct.pack_into("<HHII", data, entry, tag, 4, 1, value)  # as a LONG
    return bytes(data)


def _claim_webp(data, width, height):
    lossy = data.find(b"\x9d\x01\x2a")  # VP8's key frame start code, then 14-bit sizes
    if lossy >= 0:
        struct.pack_into("<HH", data, lossy + 3, min(width, 16383), min(height, 16383))
    lossless = data.find(b"VP8L")  # signature 0x2f, then 14-bit (size - 1) fields
    if lossless >= 0:
        w, h = (max(0, min(v, 16384) - 1) for v in (width, height))
        bits = struct.unpack_from("<I", data, lossless + 9)[0] & ~((1 << 28) - 1)
        struct.pack_into("<I", data, lossless + 9, bits | w | h << 14)
    extended = data.find(b"VP8X")  # the canvas: 24-bit (size - 1) fields
    if extended >= 0:
        w, h = (max(0, min(v, 2**24) - 1) for v in (width, height))
        data[extended + 12 : extended + 18] = w.to_bytes(3, "little") + h.to_bytes(3, "little")
    return bytes(data)


# sizes a header may claim: past MAX_PIXELS, at it, just fitting, none
CLAIMS = [
    (20000, 20000),
    (1, 10**9),
    (10**9, 1),
    (65535, 65535),
    (2**31 - 1, 2**31 - 1),
    (2**32 - 1, 1),
    (8193, 8192),
    (8192, 8192),
    (4000, 3000),
    (0, 5),
    (5, 0),
    (0, 0),
]


# ---- damage --------------------------------------------------------------------


def damage(rng, data: bytes, fmt: str) -> bytes:
    """One way a file is spoilt."""
    how = rng.choice(
        [
            "cut",
            "cut",
            "cut",
            "flip",
            "flip",
            "flip",
            "claim",
            "claim",
            "claim",
            "empty",
            "text",
            "noise",
            "prefix",
            "cut-after-header",
        ]
    )
    # most cuts and flips spare the header: the file passes the scan and meets the decoder
    start = 0 if rng.random() < 0.3 else len(data) // 2
    if how == "cut":
        return data[: rng.randrange(start, len(data))]
    if how == "cut-after-header":  # a header that reads, then nothing
        return data[: rng.choice([8, 16, 33, 40, 64, 100])]
    if how == "flip":
        spoilt = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            spoilt[rng.randrange(start, len(spoilt))] = rng.randrange(256)
        return bytes(spoilt)
    if how == "claim":
        spoilt = claim_size(data, fmt, *rng.choice(CLAIMS))
        return spoilt[: rng.randrange(len(spoilt))] if rng.random() < 0.3 else spoilt
    if how == "empty":
        return b""
    if how == "text":
        return rng.choice([b"not a picture\n", b"<html><body>404 Not Found</body></html>\n", b"\x00" * 64])
    if how == "noise":
        return rng.randbytes(rng.randint(1, 2000))
    return rng.randbytes(rng.randint(1, 16)) + data  # junk before the signature


# ---- the folder ------------------------------------------------------------------

# names as a download may spell them: spaces, a leading dash, non-ASCII, a
# line break or a tab, bytes that are not UTF-8 (a Latin-1 zip), very long
ODD_NAMES = ["image 1", "-dash", "ünïcödé", "日本", "new\nline", "tab\there", os.fsdecode(b"caf\xe9"), "x" * 200]


def _name(rng, i: int) -> str:
    return rng.choice(ODD_NAMES) + str(i) if rng.random() < 0.1 else f"img{i}"


def _sizes(rng, mixed: bool):
    """A function giving each picture its size: one square size for all, or many."""
    if not mixed:
        # mostly what the default --patch 4 divides, so that most cases train
        side = rng.choice([4, 4, 8, 8, 8, 12, 16, 16, 16, 32, 1, 5])
        return lambda: (side, side)
    return lambda: (rng.randint(1, 24), rng.randint(1, 24))


def _class_names(rng) -> list[str]:
    count = rng.choices([0, 1, 2, 3, 4], weights=[1, 1, 18, 8, 2])[0]
    names = [f"class{i}" for i in range(count)]
    if names and rng.random() < 0.15:
        names[0] = rng.choice(ODD_NAMES)
    return names


def _fill_class(rng, folder, writers, size, spoil: float) -> None:
    folder.mkdir()
    for i in range(rng.choices([0, 1, 2, 3, 4], weights=[1, 6, 8, 4, 2])[0]):
        suffix, fmt, write = WRITERS[rng.choice(writers)]
        data = write(rng, size())
        if rng.random() < spoil:
            data = damage(rng, data, fmt)
        if rng.random() < 0.05:
            suffix = rng.choice([".png", ".jpg", ".txt", ""])  # a name that lies about the format
        (folder / (_name(rng, i) + suffix)).write_bytes(data)


def _oddities(rng, root, classes: list) -> None:
    """What else lies in a real folder, each now and then."""

    def inside():
        return root / rng.choice(classes) if classes else root

    odd = [
        lambda: (root / "README.txt").write_text("downloaded from somewhere\n"),
        lambda: (root / "stray.png").write_bytes(WRITERS["png-RGB"][2](rng, (4, 4))),
        lambda: (inside() / ".DS_Store").write_bytes(rng.randbytes(64)),
        lambda: (inside() / "._img0.png").write_bytes(rng.randbytes(64)),  # macOS resource forks
        lambda: _hidden_folder(rng, root),
        lambda: _nested(rng, inside()),
        lambda: (inside() / "labels.csv").write_text("file,label\nimg0.png,0\n"),
        lambda: (inside() / "zero.png").symlink_to("/dev/zero"),
        lambda: (inside() / "dangling.png").symlink_to(root / "nowhere.png"),
        lambda: _loop(inside()),
        lambda: (root / "loop-class").symlink_to(root / "loop-class"),
        lambda: (root / "alias").symlink_to(root / rng.choice(classes)) if classes else None,
        lambda: _link_a_picture(rng, root, classes),
        lambda: os.mkfifo(inside() / "pipe.png"),
        lambda: (inside() / "big-but-fine.png").write_bytes(png_bomb(*rng.choice(BOMBS))),
    ]
    for _ in range(rng.choices([0, 1, 2, 3], weights=[6, 4, 2, 1])[0]):
        with contextlib.suppress(FileExistsError):  # the same oddity drawn twice
            rng.choice(odd)()


# valid pictures of many pixels in few bytes: toy's MAX_PIXELS, thin lines, a photo's size
BOMBS = [(8192, 8192), (8192, 1), (1, 8192), (3000, 2000)]


def _hidden_folder(rng, root) -> None:
    """.ipynb_checkpoints or .git: a folder that is not a class."""
    hidden = root / rng.choice([".ipynb_checkpoints", ".git", ".thumbnails"])
    hidden.mkdir(exist_ok=True)
    if rng.random() < 0.5:
        (hidden / "img0-checkpoint.png").write_bytes(WRITERS["png-L"][2](rng, (4, 4)))


def _nested(rng, folder) -> None:
    sub = folder / "more"
    sub.mkdir(exist_ok=True)
    (sub / "img9.png").write_bytes(WRITERS["png-RGB"][2](rng, (8, 8)))


def _loop(folder) -> None:
    (folder / "a.png").symlink_to(folder / "b.png")
    (folder / "b.png").symlink_to(folder / "a.png")


def _link_a_picture(rng, root, classes) -> None:
    pictures = [p for c in classes for p in (root / c).iterdir() if p.is_file()]
    if pictures:
        target = rng.choice(pictures)
        (root / rng.choice(classes) / f"link-{rng.randrange(1000)}{target.suffix}").symlink_to(target)


def make_folder(rng, root, mixed: bool) -> None:
    root.mkdir()
    roll = rng.random()
    if roll < 0.35:
        writers = [rng.choice(list(WRITERS))]  # one format, one mode
    elif roll < 0.7:
        writers = rng.sample(list(WRITERS), rng.randint(2, 4))
    else:
        writers = list(WRITERS)
    size = _sizes(rng, mixed)
    # a share of the files damaged: mostly none, so that most cases get past the
    # scan of the headers to the decoding of every picture
    spoil = rng.choice([0.0, 0.0, 0.0, 0.1, 0.25])
    classes = _class_names(rng)
    for name in classes:
        _fill_class(rng, root / name, writers, size, spoil)
    _oddities(rng, root, classes)


# ---- the command ---------------------------------------------------------------

# sizes whose ViT (with a patch of 4 or less: a million patches an image or more)
# or float32 set fits no machine, the bound (65,536) and past it
HUGE_SIZES = [4096, 8192, 65536, 65537, 100000]


def _options(rng, mixed: bool) -> list[str]:
    argv, size = [], None
    if rng.random() < (0.8 if mixed else 0.3):  # pictures of many sizes need it
        size = rng.choices([rng.randrange(4, 33, 4), rng.randint(1, 32), rng.choice(HUGE_SIZES)], weights=[6, 2, 2])[0]
        argv += ["--image-size", str(size)]
    if rng.random() < 0.3:
        # a huge size keeps a small patch: its ViT is refused for memory, where a large
        # patch would make it a legitimate model of hours and gigabytes
        patches = [1, 2, 4] if size in HUGE_SIZES else [1, 2, 3, 4, 5, 8, 16, 256]
        argv += ["--patch", str(rng.choice(patches))]
    if rng.random() < 0.1:
        argv += ["--eval-split", rng.choice(["0", "0.5", "0.99"])]
    if rng.random() < 0.1:
        argv += ["--batch", rng.choice(["1", "64"])]
    return argv


def make_case(rng, workdir):
    root = workdir / ("images" if rng.random() < 0.9 else rng.choice(ODD_NAMES))
    mixed = rng.random() < 0.35
    make_folder(rng, root, mixed)
    return "toy-train", ["vit-tiny", "--images", str(root), *BASE, *_options(rng, mixed)]
