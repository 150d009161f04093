"""toy-train: the command line. One sub-command per recipe, each with its
own options (toy/commands/); no sub-command means from-scratch.

stdout carries only the loss log (format toy/train-v1, one `step N: loss=X`
line per step) or, with --json, one JSON object. Everything else goes to
stderr. Bad input exits 2 with one line naming the problem and the fix; a
failure inside a run exits 1; a run stopped by Ctrl-C or SIGTERM saves a
checkpoint and exits 130 or 143.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from ..core import bounds
from ..training import loop
from ..native.library import VersionAction, device_notice, library
from ..training.checkpoint import Checkpoint, find_checkpoint
from ..options import COMMANDS
from ..options.common import check_optimizer
from ..core.errors import InputError, OneLineParser, run_command

DEFAULT_RECIPE = "from-scratch"
# what a resume may change: how the run is carried out, not what it computes
RESUME_MAY_CHANGE = ("threads", "json", "save_every", "keep", "resume")


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="toy-train", description="Train a llama-family model; stdout is the loss log. "
                "Without a recipe, trains from scratch.",
                epilog="Also: toy-train samples [DIR] writes sample data (notes.txt, pairs.jsonl, "
                       "photos/) to try the recipes on; toy-train plot RUN... draws runs' losses "
                       "in one SVG.")
    p.add_argument("--version", action=VersionAction, version_name="toy",
                   help="show toy's version and its backends here, then exit")
    sub = p.add_subparsers(dest="recipe", metavar="RECIPE", parser_class=OneLineParser,
                           help=" | ".join(COMMANDS))
    for name, command in COMMANDS.items():
        # no abbreviations: --init (warm-start's) must not be taken for --init-scale
        command.add_options(sub.add_parser(name, help=command.HELP, description=command.HELP,
                                           allow_abbrev=False))
    bounds.annotate_help(p)
    return p


def _recipe_parsers(parser) -> dict:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _with_recipe(argv: list[str]) -> tuple[list[str], bool]:
    """argv with the recipe named first (from-scratch when it names none) and
    whether the user named it."""
    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help", "--version")):
        return argv, True
    if argv and not argv[0].startswith("-"):
        return argv, True            # an unknown recipe: argparse says so
    return [DEFAULT_RECIPE, *argv], False


def _owners(flag: str) -> list[str]:
    parsers = _recipe_parsers(build_parser())
    return [name for name, p in parsers.items() if flag in p._option_string_actions]


def parse(argv: list[str], parser=None) -> argparse.Namespace:
    """Parse a command line; an option of another recipe is named as such."""
    parser = parser or build_parser()
    argv, _ = _with_recipe(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:
        flag = next((x for x in extra if x.startswith("-")), extra[0]).split("=")[0]
        owners = _owners(flag)
        if owners:
            named = " and ".join(owners) if len(owners) < 3 else ", ".join(owners[:-1]) + " and " + owners[-1]
            raise InputError(f"{flag} is an option of {named}, not of {args.recipe} "
                             f"(see toy-train {args.recipe} --help)")
        raise InputError(f"unrecognized arguments: {' '.join(extra)} (see toy-train {args.recipe} --help)")
    return args


def _explicit_options(argv: list[str]) -> dict:
    """The options argv sets itself, argparse's defaults left out (the recipe
    only when argv names it)."""
    parser = build_parser()
    for recipe_parser in _recipe_parsers(parser).values():
        for action in recipe_parser._actions:
            action.default = argparse.SUPPRESS
    given = vars(parse(argv, parser))
    if not _with_recipe(argv)[1]:
        given.pop("recipe")
    return given


def _saved_args(checkpoint) -> dict:
    """The arguments a checkpoint's run was started with, each checked as the
    command line would check it: a checkpoint is a file like any other, and
    what it says goes to the C core. An option newer than the checkpoint
    takes its default."""
    saved = checkpoint.state["args"]
    damaged = f"checkpoint {checkpoint.path} is damaged"
    if saved.get("recipe") not in COMMANDS:
        raise InputError(f"{damaged}: its recipe {str(saved.get('recipe'))[:40]!r} is not one of toy's")
    actions = {a.dest: a for a in _recipe_parsers(build_parser())[saved["recipe"]]._actions
               if a.dest != "help"}
    unknown = sorted(set(saved) - set(actions) - {"recipe"})
    if unknown:
        raise InputError(f"{damaged}: it has an option toy does not know ({unknown[0][:40]})")
    args = {"recipe": saved["recipe"]}
    for dest, action in actions.items():
        value = saved.get(dest, action.default)
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
            raise InputError(f"{damaged}: its --{dest.replace('_', '-')} {str(value)[:40]!r} is not one "
                             "the command line accepts")
        args[dest] = value
    return args


def _resume_args(given: dict):
    """The arguments of the run being resumed, and its checkpoint. Options
    given again must agree with the run's, except those that only say how
    to carry it out (RESUME_MAY_CHANGE)."""
    if "out" in given or "overwrite" in given:
        raise InputError("--resume continues in the run's own directory; drop --out and --overwrite")
    checkpoint = Checkpoint(find_checkpoint(given["resume"]))
    saved = _saved_args(checkpoint)
    for dest, value in given.items():
        if dest not in RESUME_MAY_CHANGE and saved.get(dest) != value:
            flag = "the recipe" if dest == "recipe" else "--" + dest.replace("_", "-")
            raise InputError(f"{flag} {value} differs from the run being resumed ({saved.get(dest)}); "
                             "a resume continues that run as it was started")
    args = argparse.Namespace(**{**saved, **{d: given[d] for d in RESUME_MAY_CHANGE if d in given}})
    if checkpoint.state["step"] >= args.steps:
        raise InputError(f"{checkpoint.run_path} has finished all its {args.steps} steps: nothing to resume")
    return args, checkpoint


def checked_args(argv: list[str]):
    """The run a command line asks for, every option checked, and the
    checkpoint it resumes (None for a new run)."""
    given = _explicit_options(argv)
    if "resume" in given:
        args, checkpoint = _resume_args(given)
    else:
        args, checkpoint = parse(argv), None
    check_optimizer(args)
    COMMANDS[args.recipe].check(args)
    library(args.device)   # a device that is not built is bad input: exit 2
    return args, checkpoint


def run(argv: list[str]) -> int:
    args, checkpoint = checked_args(argv)
    notice = device_notice(args.device)
    if notice is not None:
        print(notice, file=sys.stderr)
    return loop.run(args, checkpoint)


# toy-train's sub-commands that are not recipes: each a main(argv) of its own
TOOLS = {"plot": "toy.cli.plot", "samples": "toy.datasets.samples"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in TOOLS:
        return importlib.import_module(TOOLS[argv[0]]).main(argv[1:])
    return run_command("toy-train", lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
