"""The options stay as the user gave them: every recipe's options are a
frozen dataclass, and what a recipe chooses for the options it was left
(instruct's batch, eval split and epochs by the data's size, the sample
data, --base-compute auto's choice) is returned in its Prepared, not written
back. The run goes on with them resolved, and that is what a checkpoint
records, so a resume chooses nothing again."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cli_helpers import toy_train
from toy.options import COMMANDS, Prepared, from_values
from toy.training.checkpoint import Checkpoint, find_checkpoint


@pytest.mark.parametrize("recipe", list(COMMANDS))
def test_every_recipes_options_are_frozen(recipe):
    options = from_values(recipe, {})
    assert dataclasses.is_dataclass(options)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.steps = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 1  # type: ignore[misc]


class _Source:
    steps = 7


def test_resolve_gives_new_options_with_the_choices_and_the_datas_steps():
    given = from_values("instruct", {"seed": 3})
    prepared = Prepared(None, _Source(), {}, "adapter.gguf", {"batch": 2, "eval_split": 0.0, "epochs": 16})
    resolved = prepared.resolve(given)
    assert (resolved.batch, resolved.eval_split, resolved.epochs, resolved.steps) == (2, 0.0, 16, 7)
    assert (given.batch, given.eval_split, given.epochs, given.steps) == (None, None, None, None)
    assert resolved.seed == 3 and resolved.lr == given.lr


def test_instruct_prepare_leaves_the_options_as_given():
    given = from_values("instruct", {"threads": 1, "seq": 64})
    prepared = COMMANDS["instruct"].prepare(given)
    assert (given.batch, given.eval_split, given.epochs, given.data) == (None, None, None, None)
    # the 30 sample facts: batch 2, nothing held out, 16 epochs (15 steps each)
    assert prepared.chosen["batch"] == 2 and prepared.chosen["eval_split"] == 0.0
    assert prepared.chosen["epochs"] == 16 and Path(prepared.chosen["data"]).name == "facts.jsonl"
    assert prepared.chosen["base_compute"] in ("fast", "stored")
    assert prepared.source.steps == 16 * 15 and prepared.weights_name == "adapter.gguf"


def test_a_checkpoint_records_the_options_the_recipe_chose(tmp_path):
    run = tmp_path / "run"
    # --base-compute auto (the default) is chosen at realize: the checkpoint says which
    result = toy_train(
        "lora", "--steps", "2", "--save-every", "1", "--seq", "16", "--batch", "1", "--threads", "1", "--out", str(run)
    )
    assert result.returncode == 0, result.stderr
    saved = Checkpoint(find_checkpoint(run)).state["args"]
    assert saved["base_compute"] in ("fast", "stored") and saved["steps"] == 2
    assert (saved["seq"], saved["batch"], saved["recipe"]) == (16, 1, "lora")
