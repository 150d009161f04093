"""toy-train plot RUN [RUN ...] [-o OUT.svg] [--overwrite]: several runs'
loss curves in one SVG, a colour per run (training loss solid, eval loss
dashed), the legend naming each run by its directory.

The output (default plot.svg in the current directory; `-o -`: stdout)
replaces an earlier plot toy wrote there; any other file is kept unless
--overwrite is given. The path written goes to stderr. Bad input (a RUN
that is not a run directory, a damaged events.jsonl line, an output that
cannot be written) is one line, exit 2 (errors.run_command).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..core.errors import PATH_ERRNOS, InputError, OneLineParser, run_command
from ..core.files import write_whole
from ..training.plot import MARK, RunEvents, overlay_svg

PROG = "toy-train plot"


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog=PROG,
        description="Overlay the loss curves of toy-train runs in one SVG: a colour "
        "per run, training loss solid, eval loss (where a run has one) dashed.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="a run directory (runs/<run_id>, or a --out DIR)")
    p.add_argument(
        "-o",
        "--output",
        default="plot.svg",
        metavar="OUT.svg",
        help="the SVG to write (default plot.svg; - for stdout). An earlier plot of toy's "
        "there is replaced; another file only with --overwrite",
    )
    p.add_argument("--overwrite", action="store_true", help="replace -o even if it is not a plot of toy's")
    return p


def _events(run: str) -> RunEvents:
    path = Path(run)
    if not path.exists():
        raise InputError(f"RUN {run} does not exist: give a toy-train run directory (runs/<run_id>)")
    if not path.is_dir():
        raise InputError(f"RUN {run} is a file, not a run directory: give the folder that holds events.jsonl")
    events = path / "events.jsonl"
    if not events.is_file():
        what = "a folder named events.jsonl" if events.exists() else "no events.jsonl"
        raise InputError(f"{run} is not a toy-train run directory: it holds {what}")
    try:
        return RunEvents(events, strict=True).read()
    except OSError as err:
        raise InputError(f"cannot read {events}: {err.strerror}") from None


def _names(runs: list[str]) -> list[str]:
    """Each run's directory name; the path as given where two names agree."""
    names = [Path(os.path.abspath(run)).name or run for run in runs]
    return [name if names.count(name) == 1 else run for name, run in zip(names, runs)]


def _is_toy_plot(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError:
        return False
    return head.startswith(b"<svg") and MARK.encode() in head


def _check_output(out: Path, overwrite: bool) -> None:
    if out.is_dir():
        raise InputError(f"-o {out} is a folder: name a file, e.g. -o {out / 'plot.svg'}")
    if out.exists() and not overwrite and not _is_toy_plot(out):
        raise InputError(f"-o {out} exists and is not a plot toy wrote: give --overwrite to replace it, or another -o")


def main(argv: list[str] | None = None) -> int:
    def body() -> int:
        args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
        out = None if args.output == "-" else Path(args.output)
        if out is not None:
            _check_output(out, args.overwrite)  # before the runs are read: a quick refusal
        runs = [_events(run) for run in args.runs]
        svg = overlay_svg(list(zip(_names(args.runs), runs))).encode("utf-8")
        if out is None:
            sys.stdout.buffer.write(svg)
            sys.stdout.flush()
            return 0
        try:
            write_whole(out, svg)
        except OSError as err:
            if err.errno not in PATH_ERRNOS:
                raise  # a full disk: a failure, exit 1
            raise InputError(f"cannot write -o {out}: {err.strerror} (give a path in a writable folder)") from None
        print(f"{PROG}: wrote {out} ({len(runs)} run{'s' if len(runs) > 1 else ''})", file=sys.stderr)
        return 0

    return run_command(PROG, body)


if __name__ == "__main__":
    sys.exit(main())
