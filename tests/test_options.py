"""The typed options (toy.options): one dataclass per recipe, the same for
toy-train's command line and toy.finetune; their defaults are the command
line's and a bad value is refused with the command line's words."""

import argparse
import dataclasses

import pytest

import toy
from toy.cli.train import _recipe_parsers, build_parser, checked_args
from toy.options import COMMANDS, LoRAOptions, from_values, recipe_parser


@pytest.mark.parametrize("recipe", list(COMMANDS))
def test_each_recipes_dataclass_is_its_command_line(recipe):
    """The dataclass's fields are the sub-parser's options, with its defaults."""
    parser = _recipe_parsers(build_parser())[recipe]
    actions = {a.dest: a for a in parser._actions if a.dest != "help"}
    options = COMMANDS[recipe].options()
    fields = {f.name for f in dataclasses.fields(options)} - {"recipe"}
    assert fields == set(actions)
    assert options.recipe == recipe
    for dest, action in actions.items():
        assert getattr(options, dest) == action.default, dest
    assert {a.dest for a in recipe_parser(recipe)._actions} == {a.dest for a in parser._actions}


def test_the_command_line_parses_into_the_recipes_dataclass():
    options, checkpoint = checked_args(["lora", "--rank", "4", "--targets", "q_proj,v_proj", "--lr", "5e-4"])
    assert isinstance(options, LoRAOptions) and checkpoint is None
    assert (options.rank, options.targets, options.lr, options.alpha) == (4, "q,v", 5e-4, None)


def test_python_values_become_the_same_options():
    assert (
        from_values("lora", {"rank": 4, "targets": ["q_proj", "v_proj"], "lr": 5e-4})
        == checked_args(["lora", "--rank", "4", "--targets", "q_proj,v_proj", "--lr", "5e-4"])[0]
    )
    assert from_values("instruct", {"rank": None}).rank == 16  # None: the default


@pytest.mark.parametrize(
    "recipe, values, argv",
    [
        ("lora", {"rank": 0}, ["--rank", "0"]),
        ("instruct", {"lr": -1.0}, ["--lr", "-1.0"]),
        ("lora", {"device": "tpu"}, ["--device", "tpu"]),
        ("lora", {"steps": 2.5}, ["--steps", "2.5"]),
    ],
)
def test_a_bad_value_is_refused_with_the_command_lines_words(recipe, values, argv):
    with pytest.raises(toy.InputError) as from_python:
        from_values(recipe, values)
    with pytest.raises(toy.InputError) as from_argv:
        checked_args([recipe, *argv])
    assert str(from_python.value) == str(from_argv.value)


def test_an_option_of_another_recipe_is_named_as_such():
    with pytest.raises(toy.InputError) as from_python:
        from_values("from-scratch", {"rank": 4})
    with pytest.raises(toy.InputError) as from_argv:
        checked_args(["from-scratch", "--rank", "4"])
    assert (
        str(from_python.value)
        == str(from_argv.value)
        == "--rank is an option of lora, instruct, dpo and orpo, not of from-scratch"
        " (see toy-train from-scratch --help)"
    )


def test_finetune_refuses_before_anything_is_written(tmp_path):
    refused = r"argument --beta: expected a number from above 0 to 1e\+06, got 0 \(see toy-train dpo --help\)"
    with pytest.raises(toy.InputError, match=refused):
        toy.finetune(recipe="dpo", out=tmp_path / "r", beta=0)
    with pytest.raises(toy.InputError, match="argument --untied: expected True or False"):
        toy.finetune(recipe="from-scratch", out=tmp_path / "r", untied="yes")
    assert not (tmp_path / "r").exists()


def test_the_options_are_plain_dataclasses():
    options = LoRAOptions(rank=4)
    assert dataclasses.is_dataclass(options) and options.recipe == "lora" and options.lr == 1e-3
    assert isinstance(dataclasses.asdict(options), dict)
    assert not isinstance(options, argparse.Namespace)
