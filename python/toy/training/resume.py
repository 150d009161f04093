"""Resuming a stopped run: the options it was started with, read back from
its checkpoint and checked as the command line checks them, and what may
change on the way (how the run is carried out, not what it computes)."""

from __future__ import annotations

import argparse

from ..core import bounds
from ..core.errors import InputError
from ..options import COMMANDS, TrainingOptions, recipe_parser
from .checkpoint import Checkpoint, find_checkpoint

# what a resume may change: how the run is carried out, not what it computes
RESUME_MAY_CHANGE = ("threads", "json", "save_every", "keep", "resume")
# an option newer than a checkpoint takes the value that gives what the run
# did before the option existed, where that is not the option's default
BEFORE_IT_EXISTED = {"packing": "off"}


def saved_options(checkpoint: Checkpoint) -> dict:
    """The arguments a checkpoint's run was started with, each checked as the
    command line would check it: a checkpoint is a file like any other, and
    what it says goes to the C core. An option newer than the checkpoint
    takes its default, or what the run did before it (BEFORE_IT_EXISTED)."""
    saved = checkpoint.state["args"]
    damaged = f"checkpoint {checkpoint.path} is damaged"
    if saved.get("recipe") not in COMMANDS:
        raise InputError(f"{damaged}: its recipe {str(saved.get('recipe'))[:40]!r} is not one of toy's")
    actions = {a.dest: a for a in recipe_parser(saved["recipe"])._actions if a.dest != "help"}
    unknown = sorted(set(saved) - set(actions) - {"recipe"})
    if unknown:
        raise InputError(f"{damaged}: it has an option toy does not know ({unknown[0][:40]})")
    args = {"recipe": saved["recipe"]}
    for dest, action in actions.items():
        value = saved.get(dest, BEFORE_IT_EXISTED.get(dest, action.default))
        bound = getattr(action.type, "__self__", None)
        if isinstance(action, argparse._StoreTrueAction):
            ok = isinstance(value, bool)
        elif value is None:
            ok = action.default is None or dest == "steps"
        elif action.choices is not None:
            ok = isinstance(value, str) and value in action.choices
        elif isinstance(bound, bounds.Bound):
            ok = bound.accepts(value)
        else:
            ok = isinstance(value, str)
        if not ok:
            raise InputError(
                f"{damaged}: its --{dest.replace('_', '-')} {str(value)[:40]!r} is not one the command line accepts"
            )
        args[dest] = value
    return args


def resumed(given: dict) -> tuple[TrainingOptions, Checkpoint]:
    """The arguments of the run being resumed, and its checkpoint. Options
    given again must agree with the run's, except those that only say how
    to carry it out (RESUME_MAY_CHANGE)."""
    if "out" in given or "overwrite" in given:
        raise InputError("--resume continues in the run's own directory; drop --out and --overwrite")
    checkpoint = Checkpoint(find_checkpoint(given["resume"]))
    saved = saved_options(checkpoint)
    for dest, value in given.items():
        if dest not in RESUME_MAY_CHANGE and saved.get(dest) != value:
            flag = "the recipe" if dest == "recipe" else "--" + dest.replace("_", "-")
            raise InputError(
                f"{flag} {value} differs from the run being resumed ({saved.get(dest)}); "
                "a resume continues that run as it was started"
            )
    values = {**saved, **{d: given[d] for d in RESUME_MAY_CHANGE if d in given}}
    options = COMMANDS[values["recipe"]].options(**values)
    if options.steps is None or checkpoint.state["step"] >= options.steps:
        raise InputError(f"{checkpoint.run_path} has finished all its {options.steps} steps: nothing to resume")
    return options, checkpoint
