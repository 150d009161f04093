"""Image folders found by tests/fuzz/fuzz_images.py, as a user meets them:
`toy-train vit-tiny --images DIR` on a folder as a download or a crawl
leaves it ends in a run, or in exit 2 and one line on stderr naming the file
and the fix -- never a second line, a traceback or a lost run.

Replay the fuzzer from tests/:

    python -m fuzz.harness fuzz.fuzz_images --cases 300 -v
"""

import io
import json
import os
import sys

import pytest

import toy
from cli_helpers import toy_train

Image = pytest.importorskip("PIL.Image")

SMALL_RUN = ["--steps", "1", "--batch", "2", "--d-model", "16", "--layers", "1"]


def assert_one_line(result, *phrases):
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("toy-train: error: ")
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def picture(path, color=(200, 30, 10), size=8):
    Image.new("RGB", (size, size), color).save(path)


def folder(root, classes=("cats", "dogs"), per_class=3):
    """root/<class>/<i>.png: small valid pictures, one colour per class."""
    for k, name in enumerate(classes):
        (root / name).mkdir(parents=True)
        for i in range(per_class):
            picture(root / name / f"{i}.png", color=(80 * k, 10 * i, 200))
    return root


def test_a_line_break_in_a_file_name_stays_inside_the_one_line(tmp_path):
    root = folder(tmp_path / "images")
    (root / "cats" / "bad\nname.png").write_text("not a picture\n")
    result = toy_train("vit-tiny", "--images", str(root), *SMALL_RUN, "--out", str(tmp_path / "run"))
    assert_one_line(result, "bad\\nname.png", "not an image file toy reads")


def test_a_class_folder_named_in_latin1_trains_and_keeps_its_bytes(tmp_path):
    if sys.getfilesystemencoding() != "utf-8":
        pytest.skip("names that are not UTF-8 are a POSIX file system's")
    root = folder(tmp_path / "images", classes=(os.fsdecode(b"caf\xe9"), "plain"))
    out = tmp_path / "run"
    result = toy_train("vit-tiny", "--images", str(root), *SMALL_RUN, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["classes"] == ["caf\\xe9", "plain"]
    assert toy.load_vit(out / "model.gguf").classes == ["caf\\xe9", "plain"]


def test_hidden_folders_are_not_classes(tmp_path):
    root = folder(tmp_path / "images")
    (root / ".ipynb_checkpoints").mkdir()
    (root / ".git").mkdir()
    picture(root / ".git" / "0.png")
    out = tmp_path / "run"
    result = toy_train("vit-tiny", "--images", str(root), *SMALL_RUN, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["classes"] == ["cats", "dogs"]


@pytest.mark.parametrize(
    "options,phrases",
    [
        (["--batch", "64"], ["--batch 64 is more than the 5 training images", "give --batch 5 or smaller"]),
        (["--batch", "2", "--grad-accum", "4"], ["--batch 2 x --grad-accum 4 = 8 images a step", "at most 5"]),
    ],
)
def test_a_batch_larger_than_the_training_images_is_refused_in_one_line(tmp_path, options, phrases):
    root = folder(tmp_path / "images")  # 6 images: 5 to train on, 1 held out
    result = toy_train("vit-tiny", "--images", str(root), *SMALL_RUN, *options, "--out", str(tmp_path / "run"))
    assert_one_line(result, *phrases)
    assert not (tmp_path / "run").exists()


def test_what_libtiff_prints_on_a_damaged_file_stays_inside_the_one_line(tmp_path):
    from PIL import features

    if not features.check("libtiff"):
        pytest.skip("Pillow is built without libtiff")
    root = folder(tmp_path / "images")
    tiff = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 200, 30)).save(tiff, "TIFF", compression="jpeg")
    # the JPEG tables lose their quantization table (DQT becomes a comment): libtiff's
    # JPEG codec complains on stderr itself, from C, and Pillow raises
    (root / "dogs" / "scan.tif").write_bytes(tiff.getvalue().replace(b"\xff\xdb", b"\xff\xfe"))
    result = toy_train("vit-tiny", "--images", str(root), *SMALL_RUN, "--out", str(tmp_path / "run"))
    assert_one_line(result, "cannot read image", "scan.tif")
