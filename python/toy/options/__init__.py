"""toy-train's recipes as commands: each recipe's options (a dataclass, the
same for the command line and toy.finetune), their argparse groups, their
checks and the wiring from them to a realized recipe and its data (prepare ->
Prepared). The options are frozen: they stay as the user gave them, and what
a recipe chooses for those it was left is Prepared.chosen."""

from __future__ import annotations

import argparse
import os
from typing import NoReturn

from ..core.errors import InputError, OneLineParser
from ..native.library import library
from . import from_scratch, full, instruct, lora, preference, vit_tiny, warm_start
from .common import Prepared, RecipeCommand, TrainingOptions, check_optimizer
from .from_scratch import FromScratchOptions
from .full import FullOptions
from .instruct import InstructOptions
from .lora import LoRAOptions
from .preference import DPOOptions, ORPOOptions
from .vit_tiny import ViTTinyOptions
from .warm_start import WarmStartOptions

COMMANDS: dict[str, RecipeCommand] = {
    "from-scratch": from_scratch.COMMAND,
    "lora": lora.COMMAND,
    "instruct": instruct.COMMAND,
    "dpo": preference.DPO_COMMAND,
    "orpo": preference.ORPO_COMMAND,
    "warm-start": warm_start.COMMAND,
    "full": full.COMMAND,
    "vit-tiny": vit_tiny.COMMAND,
}

__all__ = [
    "COMMANDS",
    "DPOOptions",
    "FromScratchOptions",
    "FullOptions",
    "InstructOptions",
    "LoRAOptions",
    "ORPOOptions",
    "Prepared",
    "RecipeCommand",
    "TrainingOptions",
    "ViTTinyOptions",
    "WarmStartOptions",
    "check",
    "from_namespace",
    "from_values",
    "recipe_parser",
    "refuse_unknown",
]


def recipe_parser(recipe: str) -> OneLineParser:
    """The command line of `toy-train RECIPE` alone (the same option groups
    as its sub-parser of toy-train's)."""
    command = COMMANDS[recipe]
    # no abbreviations: --init (warm-start's) must not be taken for --init-scale
    parser = OneLineParser(prog=f"toy-train {recipe}", description=command.help, allow_abbrev=False)
    command.add_options(parser)
    return parser


def _listed(names: list[str]) -> str:
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def refuse_unknown(flag: str, recipe: str, given: str) -> NoReturn:
    """Refuse an option the recipe does not take, naming the recipes that do
    take it (given: what was given, for an option no recipe takes)."""
    owners = [name for name in COMMANDS if flag in recipe_parser(name)._option_string_actions]
    if owners:
        raise InputError(f"{flag} is an option of {_listed(owners)}, not of {recipe} (see toy-train {recipe} --help)")
    raise InputError(f"unrecognized arguments: {given} (see toy-train {recipe} --help)")


def from_namespace(namespace: argparse.Namespace) -> TrainingOptions:
    """The recipe's options as the command line parsed them."""
    return COMMANDS[namespace.recipe].options(**vars(namespace))


def from_values(recipe: str, values: dict) -> TrainingOptions:
    """The recipe's options from Python values (None: the default), each
    checked as the command line checks its text, with the same words: a
    value out of range raises InputError "argument --rank/--lora-r: expected
    a whole number from 1 to 65,536, got 0 (see toy-train lora --help)"."""
    if recipe not in COMMANDS:
        raise InputError(f"no recipe {recipe!r}: toy-train's are {', '.join(COMMANDS)}")
    parser = recipe_parser(recipe)
    actions = {action.dest: action for action in parser._actions if action.dest != "help"}
    chosen = {}
    for name, value in values.items():
        action = actions.get(name)
        flag = "--" + name.replace("_", "-")
        if action is None:
            shown = flag if value is True else f"{flag} {_as_text(value)}"
            refuse_unknown(flag, recipe, shown)
        if value is None:
            continue
        if isinstance(action, argparse._StoreTrueAction):
            if not isinstance(value, bool):
                parser.error(f"argument {'/'.join(action.option_strings)}: expected True or False, got {value!r}")
            chosen[name] = value
            continue
        try:
            chosen[name] = parser._get_values(action, [_as_text(value)])
        except argparse.ArgumentError as err:
            parser.error(str(err))
    return COMMANDS[recipe].options(**chosen)


def _as_text(value) -> str:
    """A Python value as the command line would give it: a list comma-separated."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def check(options: TrainingOptions) -> None:
    """Every check of the recipe's options (InputError), and the device's
    library (a device that is not built is bad input)."""
    check_optimizer(options)
    COMMANDS[options.recipe].check(options)
    library(options.device)
