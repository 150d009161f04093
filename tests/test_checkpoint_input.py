"""Checkpoints are input: a run directory damaged, edited by hand or
downloaded is resumed, or refused in one line (exit 2) before anything in it
changes -- and a resume never writes outside the run it continues. Each test
is a case tests/fuzz/fuzz_checkpoint.py found."""

import json
import shutil
import zipfile

import numpy as np
import pytest

from cli_helpers import GATE_THREADS, toy_train

# 4 steps, a checkpoint after step 2: resuming it runs steps 3 and 4 again
RUN = ("--steps", "4", "--save-every", "2", "--threads", GATE_THREADS, "--seq", "16", "--batch", "1", "--d-model", "32")
CHECKPOINT = "step-00000002.npz"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    where = tmp_path_factory.mktemp("made")
    made = toy_train("--out", "run", *RUN, cwd=where)
    assert made.returncode == 0, made.stderr
    return where / "run"


@pytest.fixture
def run(finished_run, tmp_path):
    """A copy of the run, in tmp_path/run."""
    return shutil.copytree(finished_run, tmp_path / "run")


def assert_refused(result, *phrases):
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("toy-train: error: "), result.stderr[-2000:]
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def files(folder) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def edit_checkpoint(path, change):
    """Rewrite a checkpoint with change(state, arrays) applied to its JSON record and tensors."""
    with np.load(path) as npz:
        arrays = {name: npz[name] for name in npz.files}
    state = json.loads(arrays.pop("__state__").tobytes())
    change(state, arrays)
    arrays["__state__"] = np.frombuffer(json.dumps(state).encode(), dtype=np.uint8)
    np.savez(path, **arrays)


# ---- a resume writes only into the run it continues ---------------------------


def test_a_checkpoint_copied_out_of_its_run_is_refused_and_the_folder_around_it_kept(run, tmp_path):
    # the grandparent of a downloaded step file was taken for its run: its events.jsonl
    # cut, its model.gguf about to be overwritten
    (tmp_path / "downloads").mkdir()
    shutil.copyfile(run / "checkpoint" / CHECKPOINT, tmp_path / "downloads" / CHECKPOINT)
    (tmp_path / "events.jsonl").write_text('{"step": 9}\n')
    (tmp_path / "model.gguf").write_text("a user's model\n")
    before = files(tmp_path)

    result = toy_train("--resume", f"downloads/{CHECKPOINT}", cwd=tmp_path)
    assert_refused(result, "is not in a run's checkpoint folder", "resume the run directory")
    assert files(tmp_path) == before


@pytest.mark.parametrize("name", ["latest.json.tmp", "step-00000003.npz.tmp"])
def test_a_link_where_a_checkpoint_is_written_is_refused_and_its_target_kept(run, tmp_path, name):
    # the save opened the temporary name and wrote through the link, out of the run
    outside = tmp_path / "notes.txt"
    outside.write_text("a user's notes\n")
    (run / "checkpoint" / name).symlink_to(outside)

    result = toy_train("--resume", "run", "--save-every", "1", cwd=tmp_path)
    assert_refused(result, f"holds {name}, a link where toy writes a file", "move it out")
    assert outside.read_text() == "a user's notes\n"


def test_a_folder_where_a_checkpoint_is_written_is_refused_before_the_run(run, tmp_path):
    # the save failed after step 3 with IsADirectoryError (a traceback)
    (run / "checkpoint" / "step-00000003.npz.tmp").mkdir()
    result = toy_train("--resume", "run", "--save-every", "1", cwd=tmp_path)
    assert_refused(result, "holds step-00000003.npz.tmp, a folder where toy writes a file")


# ---- a refused resume changes nothing -------------------------------------------


def test_a_checkpoint_that_does_not_fit_the_model_leaves_the_run_as_it_was(run, tmp_path):
    # events.jsonl was cut back to the checkpoint's step before the tensors were checked
    edit_checkpoint(run / "checkpoint" / CHECKPOINT, lambda state, arrays: arrays.pop("output_norm.weight"))
    before = files(run)
    assert_refused(toy_train("--resume", "run", cwd=tmp_path), "does not match the model")
    assert files(run) == before


# ---- the record's values -----------------------------------------------------


def test_a_data_position_out_of_the_rngs_range_is_refused(run, tmp_path):
    def change(state, arrays):
        state["source"]["rng"]["state"]["inc"] = 2**128  # OverflowError in numpy

    edit_checkpoint(run / "checkpoint" / CHECKPOINT, change)
    assert_refused(toy_train("--resume", "run", cwd=tmp_path), "its data position does not fit")


def test_a_loss_beyond_float_is_refused_before_the_run(run, tmp_path):
    def change(state, arrays):
        state["losses"][0] = 10**400  # OverflowError drawing loss.svg, after the run

    edit_checkpoint(run / "checkpoint" / CHECKPOINT, change)
    assert_refused(toy_train("--resume", "run", cwd=tmp_path), "its losses hold")


def test_a_nan_loss_resumes(run, tmp_path):
    # what a diverged run writes: not damage
    def change(state, arrays):
        state["losses"][0] = float("nan")

    edit_checkpoint(run / "checkpoint" / CHECKPOINT, change)
    result = toy_train("--resume", "run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def test_a_model_fingerprint_in_a_run_without_a_model_file_is_named_as_damage(run, tmp_path):
    # it said "the model file None changed"
    def change(state, arrays):
        state["fingerprints"]["model"] = "0" * 64

    edit_checkpoint(run / "checkpoint" / CHECKPOINT, change)
    result = toy_train("--resume", "run", cwd=tmp_path)
    assert_refused(result, "is damaged: its model fingerprint", "is not the sha256 of its run's model file")
    assert "None" not in result.stderr


def test_a_zip_bomb_is_refused_before_it_is_inflated(run, tmp_path):
    # toy writes entries uncompressed: one that inflates past the file's size was read whole
    path = run / "checkpoint" / CHECKPOINT
    with zipfile.ZipFile(path, "a") as archive:
        info = zipfile.ZipInfo("bomb.npy")
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w") as entry:
            for _ in range(16):
                entry.write(bytes(4 << 20))
    assert path.stat().st_size < (1 << 20) + 500_000
    assert_refused(toy_train("--resume", "run", cwd=tmp_path), "its entries claim", "more than the file holds")


# ---- the files beside the checkpoint -------------------------------------------


@pytest.mark.parametrize(
    "line",
    [b"\xff\xfe not utf-8", b"[1, 2]", b'{"step": "x"}'],
    ids=["not-utf-8", "not-an-object", "step-not-a-number"],
)
def test_a_damaged_events_line_is_cut_off_and_the_run_resumes(run, tmp_path, line):
    # UnicodeDecodeError, AttributeError and TypeError tracebacks
    events = run / "events.jsonl"
    first, *rest = events.read_bytes().splitlines(keepends=True)
    events.write_bytes(first + line + b"\n" + b"".join(rest))

    result = toy_train("--resume", "run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    steps = [json.loads(x)["step"] for x in events.read_text().splitlines()]
    assert steps == [1, 2, 3, 4]  # the damaged line dropped, the others kept


def test_events_jsonl_as_a_folder_is_refused(run, tmp_path):
    (run / "events.jsonl").unlink()
    (run / "events.jsonl").mkdir()
    assert_refused(toy_train("--resume", "run", cwd=tmp_path), "events.jsonl is not a file")


def test_a_checkpoint_named_by_hand_resumes_without_latest_json(run, tmp_path):
    # the pointer was read again after "resuming ...": a second line and exit 2
    (run / "checkpoint" / "latest.json").unlink()
    assert_refused(toy_train("--resume", "run", cwd=tmp_path), "no latest.json", "step-*.npz files")

    result = toy_train("--resume", f"run/checkpoint/{CHECKPOINT}", "--save-every", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads((run / "checkpoint" / "latest.json").read_text())["file"] == "step-00000003.npz"


def test_overwrite_refused_for_a_folder_in_place_of_a_run_file_removes_nothing(run, tmp_path):
    # --overwrite removed config.json, then failed on the folder: "cannot clear", one file gone
    (run / "events.jsonl").unlink()
    (run / "events.jsonl").mkdir()
    before = files(run)
    result = toy_train("--out", "run", "--overwrite", *RUN, cwd=tmp_path)
    assert_refused(result, "holds events.jsonl, a folder where toy writes a file")
    assert files(run) == before


@pytest.mark.parametrize("steps", [None, "8", 9, 2], ids=["null", "a-string", "more", "fewer"])
def test_saved_steps_that_are_not_the_runs_are_refused(run, tmp_path, steps):
    # null was a TypeError comparing the checkpoint's step with None
    def change(state, arrays):
        state["args"]["steps"] = steps

    edit_checkpoint(run / "checkpoint" / CHECKPOINT, change)
    assert_refused(toy_train("--resume", "run", cwd=tmp_path), "is damaged: its --steps")


def test_saved_options_without_steps_take_the_runs(run, tmp_path):
    # a TypeError too: the option took its default, None
    edit_checkpoint(run / "checkpoint" / CHECKPOINT, lambda state, arrays: state["args"].pop("steps"))
    result = toy_train("--resume", "run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("step 3:")


@pytest.mark.parametrize("key", ["recipe", "seq", "lr"])
def test_an_option_that_holds_a_list_or_object_is_refused(run, tmp_path, key):
    # a dict as the recipe was "TypeError: unhashable type" in the recipe lookup
    def change(state, arrays):
        state["args"][key] = {"a": 1} if key == "recipe" else [16]

    edit_checkpoint(run / "checkpoint" / CHECKPOINT, change)
    assert_refused(toy_train("--resume", "run", cwd=tmp_path), f"is damaged: its option '{key}' holds")
