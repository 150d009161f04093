"""instruct's defaults as a user meets them: the options the data decides
(a smaller batch, no held-out split, and more epochs where a set has few
rows), said at the start of the run, and the README's headline held true:
with every option at its default, SmolLM2 learns the 30 facts toy ships and
answers them asked in other words (README, "Instruction tuning and
toy-generate"; how the defaults were chosen: docs/instruct.md, "Defaults that
work"; scored as benchmarks/defaults_study.py scores its fact sets)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from cli_helpers import GATE_THREADS, toy_train
from toy.options.instruct import InstructOptions, data_defaults, epoch_defaults

REPO = Path(__file__).resolve().parents[1]


def study():
    """benchmarks/defaults_study.py: its questions and its scoring."""
    spec = importlib.util.spec_from_file_location("defaults_study", REPO / "benchmarks" / "defaults_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_small_set_trains_every_sample_in_batches_of_two():
    args = InstructOptions()
    chosen, said = data_defaults(args, 120)
    assert chosen == {"batch": 2, "eval_split": 0.0}
    assert said == [
        "batch 2 (under 200 samples: twice the steps an epoch)",
        "no eval split (under 200 samples: each held out is one never learned)",
    ]
    assert (args.batch, args.eval_split) == (None, None)  # the options stay as given


def test_a_set_of_200_keeps_batch_4_and_holds_a_tenth_out():
    assert data_defaults(InstructOptions(), 200) == ({"batch": 4, "eval_split": 0.1}, [])


def test_what_the_user_gave_is_kept():
    assert data_defaults(InstructOptions(batch=8, eval_split=0.25), 30) == ({}, [])


class Rows:
    """What epoch_defaults reads of an InstructSource: its steps an epoch."""

    def __init__(self, steps_per_epoch: int, args: InstructOptions):
        self.steps_per_epoch, self.args = steps_per_epoch, args
        self.steps, self.epochs = args.steps, args.epochs

    def set_epochs(self, epochs: int) -> None:
        self.epochs = epochs
        self.steps = self.args.steps or epochs * self.steps_per_epoch


def test_every_fact_is_seen_16_times_and_says_nothing():
    rows = Rows(15, InstructOptions())  # 30 facts at batch 2
    assert epoch_defaults(rows.args, rows) == [] and (rows.epochs, rows.steps) == (16, 240)
    rows = Rows(60, InstructOptions())  # 120 facts at batch 2
    assert epoch_defaults(rows.args, rows) == [] and (rows.epochs, rows.steps) == (16, 960)


def test_a_set_of_few_rows_takes_more_epochs_to_reach_240_steps():
    rows = Rows(8, InstructOptions())  # 30 facts packed two to a row (Gemma 3), at batch 2
    assert epoch_defaults(rows.args, rows) == ["30 epochs (16 would be 128 steps: at least 240)"]
    assert (rows.epochs, rows.steps) == (30, 240)


def test_the_users_epochs_or_steps_are_kept():
    rows = Rows(15, InstructOptions(epochs=3))
    assert epoch_defaults(rows.args, rows) == [] and rows.epochs == 3
    rows = Rows(15, InstructOptions(steps=10))
    assert epoch_defaults(rows.args, rows) == [] and rows.steps == 10


def readme_headline() -> tuple[int, int]:
    """The README's claim: at least L of the 30 facts as trained and D asked differently."""
    text = " ".join((REPO / "README.md").read_text().split())
    found = re.search(r"learns at least \*\*(\d+) of the 30\*\* as trained and \*\*(\d+)\*\* asked differently", text)
    assert found, "README's headline for instruct's defaults is not where this test reads it"
    return tuple(int(n) for n in found.groups())


@pytest.mark.slow  # 240 steps, then 60 questions: about 3 minutes on 2 cores
def test_the_defaults_teach_the_shipped_facts_as_the_readme_says(smollm2, tmp_path):
    import toy

    out = tmp_path / "run"
    # the README's command: nothing but where the run goes (and the gate's threads)
    result = toy_train("instruct", "--threads", GATE_THREADS, "--out", str(out), timeout=900)
    assert result.returncode == 0, result.stderr
    # what the data chose is said first, and recorded
    first = result.stderr.splitlines()[0]
    assert first == (
        "toy-train: 30 samples: batch 2 (under 200 samples: twice the steps an epoch); "
        "no eval split (under 200 samples: each held out is one never learned)"
    )
    config = json.loads((out / "config.json").read_text())
    assert (config["eval_samples"], config["train_samples"]) == (0, 30)
    scoring = study()
    model = toy.load_model(smollm2, out / "adapter.gguf", threads=2)
    counts = {}
    asked = scoring.questions("sample")
    for wording in ("learned", "differently"):
        pairs = asked[wording]
        replies = [
            scoring.reply_of(toy.generate(model, q, scoring.MAX_NEW_TOKENS, 0.0, 0, (), 0, chat=True)) for q, _ in pairs
        ]
        counts[wording] = sum(scoring.answered(reply, keys) for reply, (_, keys) in zip(replies, pairs))
    print(f"shipped facts answered: {counts}")
    learned, differently = readme_headline()
    assert counts["learned"] >= learned and counts["differently"] >= differently
