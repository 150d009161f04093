"""toy-train vit-tiny as a user runs it: the digits learned, the golden log,
a model load_vit reads back, a folder of the user's own images, and one-line
errors for bad image folders."""

import json

import numpy as np
import pytest

import toy
from cli_helpers import GATE_THREADS, golden_log, toy_train
from toy.datasets.images import held_out_split, load_digits

PIL = pytest.importorskip("PIL.Image")


def test_vit_matches_the_golden_log(tmp_path):
    result = toy_train("vit-tiny", "--threads", GATE_THREADS, "--steps", "12", "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == golden_log("vit-tiny-digits-cpu.txt")


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
    """Five epochs on the digits: a model well past chance."""
    out = tmp_path_factory.mktemp("vit") / "run"
    result = toy_train("vit-tiny", "--threads", "2", "--epochs", "5", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out, result


def test_vit_reports_held_out_accuracy_every_epoch_and_learns_the_digits(digits_run):
    out, result = digits_run
    epochs = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines() if "epoch" in line]
    assert [e["epoch"] for e in epochs] == [1, 2, 3, 4, 5]
    assert all(e["eval_images"] == 359 for e in epochs)
    assert epochs[-1]["eval_accuracy"] >= 0.85
    assert f"epoch 5: held-out accuracy {100 * epochs[-1]['eval_accuracy']:.1f}%" in result.stderr
    config = json.loads((out / "config.json").read_text())
    assert config["train_images"] + config["eval_images"] == 1797


def test_load_vit_predicts_what_the_run_measured(digits_run):
    out, _ = digits_run
    model = toy.load_vit(out / "model.gguf")
    data = load_digits()
    _, held_out = held_out_split(len(data.labels), 0.2)
    probs = model.predict(data.images[held_out, :, :, 0])
    assert probs.shape == (359, 10) and np.allclose(probs.sum(axis=1), 1, atol=1e-5)
    accuracy = (probs.argmax(axis=1) == data.labels[held_out]).mean()
    last = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines() if "epoch" in line][-1]
    assert accuracy == pytest.approx(last["eval_accuracy"])
    assert model.classes == [str(d) for d in range(10)]
    with pytest.raises(toy.ToyError, match="images must be"):
        model.predict(np.zeros((2, 16, 16)))


def bars(size, vertical, shift):
    image = np.zeros((size, size, 3), dtype=np.uint8)
    if vertical:
        image[:, shift % size, :] = (255, 64, 0)
    else:
        image[shift % size, :, :] = (0, 64, 255)
    return PIL.fromarray(image)


def make_folder(root, per_class=12, sizes=(12,)):
    for name, vertical in (("horizontal", False), ("vertical", True)):
        (root / name).mkdir(parents=True)
        for i in range(per_class):
            bars(sizes[i % len(sizes)], vertical, i).save(root / name / f"{i}.png")
    return root


def test_vit_trains_on_a_folder_of_class_folders(tmp_path):
    images = make_folder(tmp_path / "bars", sizes=(12, 20))
    out = tmp_path / "run"
    result = toy_train(
        "vit-tiny",
        "--images",
        str(images),
        "--image-size",
        "8",
        "--epochs",
        "15",
        "--batch",
        "4",
        "--eval-split",
        "0.25",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    config = json.loads((out / "config.json").read_text())
    assert config["classes"] == ["horizontal", "vertical"] and config["model"]["channels"] == 3
    model = toy.load_vit(out / "model.gguf")
    test = np.stack([np.asarray(bars(8, v, 3), dtype=np.float32) / 255 for v in (False, True)])
    assert list(model.predict(test).argmax(axis=1)) == [0, 1]


def test_bad_image_folders_are_one_line_errors(tmp_path):
    def refused(root, *extra):
        result = toy_train("vit-tiny", "--images", str(root), *extra, "--out", str(tmp_path / "never"))
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert not (tmp_path / "never").exists()
        return result.stderr

    assert "not a directory" in refused(tmp_path / "missing")
    mixed = make_folder(tmp_path / "mixed", sizes=(12, 20))
    assert "different sizes" in refused(mixed)
    empty = make_folder(tmp_path / "empty")
    (empty / "nothing").mkdir()
    assert "has no image files" in refused(empty)
    broken = make_folder(tmp_path / "broken")
    (broken / "vertical" / "notes.png").write_text("not an image")
    assert "cannot read image" in refused(broken)
    one = tmp_path / "one"
    (one / "only").mkdir(parents=True)
    bars(8, True, 0).save(one / "only" / "a.png")
    assert "at least two class folders" in refused(one)
    assert "does not divide" in refused(make_folder(tmp_path / "odd"), "--patch", "5")


def test_a_batch_of_one_image_trains_and_measures_its_accuracy(tmp_path):
    # the session hands back one image's logits without the batch dimension
    result = toy_train("vit-tiny", "--steps", "2", "--batch", "1", "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert "held-out accuracy" in result.stderr
