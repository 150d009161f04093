"""toy-train samples: the shipped data the README's and docs/ pages' commands use."""

import json
import subprocess
import sys
from dataclasses import replace

import toy


def toy_train(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "toy.cli.train", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_samples_are_written_once_and_never_over_a_users_file(tmp_path):
    done = toy_train("samples", "here", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    facts = [json.loads(line) for line in (tmp_path / "here/facts.jsonl").read_text().splitlines()]
    assert len(facts) == 30 and all(set(f) == {"prompt", "response"} for f in facts)
    assert len((tmp_path / "here/notes.txt").read_text()) > 1000
    assert sorted(p.name for p in (tmp_path / "here/photos").iterdir()) == ["cross", "ring"]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("my own notes")
    again = toy_train("samples", "mine", cwd=tmp_path)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "already exists" in again.stderr
    assert (tmp_path / "mine/notes.txt").read_text() == "my own notes"
    assert not (tmp_path / "mine/facts.jsonl").exists()  # refused before anything was copied


def test_instruct_and_dpo_default_to_the_sample_files():
    from toy.cli.train import checked_args
    from toy.options import instruct, preference

    args, _ = checked_args(["instruct"])
    assert args.data is None  # as given: the recipe chooses (Prepared.chosen)
    assert instruct.data_file(args) == str(toy.samples.path("facts.jsonl"))
    assert instruct.data_file(replace(args, data="mine.jsonl")) == "mine.jsonl"
    args, _ = checked_args(["dpo"])
    assert preference.data_file(args) == str(toy.samples.path("preferences.jsonl"))
