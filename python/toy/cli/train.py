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
from ..core.errors import OneLineParser, run_command
from ..native.library import VersionAction, device_notice
from ..options import COMMANDS, TrainingOptions, check, from_namespace, refuse_unknown
from ..training import loop
from ..training.checkpoint import Checkpoint
from ..training.resume import resumed

DEFAULT_RECIPE = "from-scratch"


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="toy-train",
        description="Train a llama-family model; stdout is the loss log. Without a recipe, trains from scratch.",
        epilog="Also: toy-train samples [DIR] writes sample data (notes.txt, pairs.jsonl, "
        "photos/) to try the recipes on; toy-train plot RUN... draws runs' losses "
        "in one SVG.",
    )
    p.add_argument(
        "--version",
        action=VersionAction,
        version_name="toy",
        help="show toy's version and its backends here, then exit",
    )
    sub = p.add_subparsers(dest="recipe", metavar="RECIPE", parser_class=OneLineParser, help=" | ".join(COMMANDS))
    for name, command in COMMANDS.items():
        # no abbreviations: --init (warm-start's) must not be taken for --init-scale
        command.add_options(sub.add_parser(name, help=command.help, description=command.help, allow_abbrev=False))
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
        return argv, True  # an unknown recipe: argparse says so
    return [DEFAULT_RECIPE, *argv], False


def parse(argv: list[str], parser=None) -> argparse.Namespace:
    """Parse a command line; an option of another recipe is named as such."""
    parser = parser or build_parser()
    argv, _ = _with_recipe(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:
        flag = next((x for x in extra if x.startswith("-")), extra[0]).split("=")[0]
        refuse_unknown(flag, args.recipe, " ".join(extra))
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


def checked_args(argv: list[str]) -> tuple[TrainingOptions, Checkpoint | None]:
    """The run a command line asks for, its options typed (the recipe's
    dataclass) and every one checked, and the checkpoint it resumes (None
    for a new run)."""
    given = _explicit_options(argv)
    if "resume" in given:
        options, checkpoint = resumed(given)
    else:
        options, checkpoint = from_namespace(parse(argv)), None
    check(options)
    return options, checkpoint


def run(argv: list[str]) -> int:
    options, checkpoint = checked_args(argv)
    notice = device_notice(options.device)
    if notice is not None:
        print(notice, file=sys.stderr)
    return loop.run(options, checkpoint)


# toy-train's sub-commands that are not recipes: each a main(argv) of its own
TOOLS = {"plot": "toy.cli.plot", "samples": "toy.datasets.samples"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in TOOLS:
        return importlib.import_module(TOOLS[argv[0]]).main(argv[1:])
    return run_command("toy-train", lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
