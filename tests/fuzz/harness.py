"""A bounded fuzz run of one of toy's inputs, in a child process that
survives nothing but is always replaced.

A fuzzer is a module with

    NAME = "jsonl"                       # how reports name it
    def make_case(rng, workdir):         # random.Random, a fresh empty folder (the cwd)
        ...                              # write whatever files the case needs into workdir
        return ("toy-train", [...argv])  # a command, run as its console script would be,
        # or return a callable: toy's Python API, called with no arguments

and every case must end in one of the outcomes a user may see:

    a command:  exit 0; or exit 2 with one line "PROG: error: ..." on stderr
                (and, with case_seconds, a run stopped by the SIGINT sent after
                that long: exit 130 and one line -- a legitimately long run)
    a callable: returns; or raises toy.ToyError with a one-line message

Anything else is a failure: another exit status, a traceback (any other
exception), more than one line, a crash of the child (signal, abort) or a
hang (no answer within hang_seconds). Cases run in a long-lived child
(python -m fuzz.harness --worker), one after another; when the child dies
or hangs, the case is recorded and a new child goes on from the next one.
Case i of seed s draws from random.Random(f"{s}:{i}"), so a failure is
replayed by its numbers alone:

    python -m fuzz.harness fuzz.fuzz_cli --seed 0 --start 17 --cases 1 -v
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMANDS = {"toy-train": "toy.cli.train", "toy-generate": "toy.cli.generate"}
EXIT_BAD_INPUT, EXIT_INTERRUPTED = 2, 130


# ---- the child's side --------------------------------------------------------


@contextlib.contextmanager
def _native_stderr(lines: list):
    """What C code (tinynn, ggml, Pillow's libraries) prints on fd 2 during
    the block, appended to lines: a user sees it on stderr as Python's."""
    from toy.core.errors import c_stderr_captured

    said = []
    try:
        with c_stderr_captured(said):
            yield
    finally:
        lines += "".join(said).strip().splitlines()


def _run_command(prog: str, argv: list[str], case_seconds: float | None) -> dict:
    main = importlib.import_module(COMMANDS[prog]).main
    out, err, native = io.StringIO(), io.StringIO(), []
    if case_seconds:
        # as a user's Ctrl-C: toy-train saves and stops, toy-generate stops
        signal.signal(signal.SIGALRM, lambda *_: signal.raise_signal(signal.SIGINT))
        signal.setitimer(signal.ITIMER_REAL, case_seconds)
    try:
        with _native_stderr(native), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(list(argv))
    except BaseException as exc:  # what a user would see as a traceback
        return {"kind": "traceback", "why": _exception_line(exc)}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    # the C lines came before the verdict, which Python prints last
    lines = native + err.getvalue().strip().splitlines()
    return {"kind": "command", "rc": rc, "stderr": lines[-3:], "n_lines": len(lines)}


def _run_callable(fn) -> dict:
    from toy import ToyError

    native = []
    try:
        with (
            _native_stderr(native),
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
        ):
            fn()
    except ToyError as err:
        if native:
            return {"kind": "native_output", "why": f"a ToyError, and C code printed {native[:2]}"}
        return {"kind": "toy_error", "message": str(err)}
    except BaseException as exc:
        return {"kind": "traceback", "why": _exception_line(exc)}
    if native:
        return {"kind": "native_output", "why": f"returned, and C code printed {native[:2]}"}
    return {"kind": "returned"}


def _exception_line(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    return f"{type(exc).__name__}: {str(exc)[:300]}{at}"


def worker(module: str, seed: int, start: int, stop: int, case_seconds: float | None) -> int:
    fuzzer = importlib.import_module(module)
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    with tempfile.TemporaryDirectory(prefix=f"toy-fuzz-{fuzzer.NAME}-") as tmp:
        for case in range(start, stop):
            workdir = Path(tmp) / f"case-{case}"
            workdir.mkdir()
            os.chdir(workdir)
            channel.write(json.dumps({"start": case}) + "\n")
            channel.flush()
            made = fuzzer.make_case(random.Random(f"{seed}:{case}"), workdir)
            if callable(made):
                result = _run_callable(made)
                result["what"] = getattr(made, "__name__", "callable")
            else:
                prog, argv = made
                result = _run_command(prog, argv, case_seconds)
                result["what"] = " ".join([prog, *argv])[:400]
            channel.write(json.dumps({"case": case, **result}) + "\n")
            channel.flush()
            os.chdir(tmp)
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


# ---- the parent's side -------------------------------------------------------


@dataclass
class Report:
    name: str
    cases: int = 0
    succeeded: int = 0  # exit 0, or the callable returned
    refused: int = 0  # exit 2 with one line, or a one-line ToyError
    stopped: int = 0  # a long run stopped by the case's SIGINT
    failures: list = field(default_factory=list)  # (case, what, why)
    messages: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def summary(self) -> str:
        return (
            f"{self.name}: {self.cases} cases in {self.seconds:.0f} s: {self.succeeded} succeeded, "
            f"{self.refused} refused in one line, {self.stopped} stopped by their time budget, "
            f"{len(self.failures)} failures"
        )

    def details(self) -> str:
        return "\n".join(f"case {case}: {why}\n    {what}" for case, what, why in self.failures)


def _gist(message: str) -> str:
    """A message without the case's own paths, cut short: messages that
    differ only in where the case ran count as one."""
    return re.sub(r"\S*toy-fuzz-[^/\s]*/(case-\d+/)?", "", message)[:80]


def _judge(result: dict, report: Report) -> str | None:
    """None when the outcome is one a user may see, else why not."""
    kind = result["kind"]
    if kind == "returned":
        report.succeeded += 1
    elif kind == "toy_error":
        message = result["message"]
        if "\n" in message.strip() or not message.strip():
            return f"ToyError not in one line: {message!r}"
        report.refused += 1
        report.messages[_gist(message)] += 1
    elif kind == "traceback":
        return "traceback: " + result["why"]
    elif kind == "native_output":
        return "lines on stderr beyond the one allowed: " + result["why"]
    elif result["rc"] == 0:
        report.succeeded += 1
    elif result["rc"] in (EXIT_BAD_INPUT, EXIT_INTERRUPTED):
        prog = result["what"].split()[0]
        expected = f"{prog}: error: " if result["rc"] == EXIT_BAD_INPUT else f"{prog}: "
        lines = result["stderr"]
        # a device notice or a stopped run's own lines may come first; the verdict is the last line
        if not lines or not lines[-1].startswith(expected):
            return f"exit {result['rc']} without the one-line message: {lines}"
        if result["rc"] == EXIT_BAD_INPUT:
            if result["n_lines"] != 1:
                return f"exit 2 with {result['n_lines']} lines on stderr: {lines}"
            report.refused += 1
            report.messages[_gist(lines[-1])] += 1
        else:
            report.stopped += 1
    else:
        return f"exit {result['rc']}: {result['stderr']}"
    return None


HUNG = "hung"  # what watch_child yields for a child that went silent


def child_env() -> dict:
    """The environment of a worker child: tests/ importable, no gdb on aborts."""
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [str(HERE.parent)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
        ),
    )
    env.setdefault("GGML_NO_BACKTRACE", "1")  # ggml would run gdb on every abort
    return env


def watch_child(child, hang_seconds: float, deadline: float | None):
    """The JSON messages a worker child writes on stdout, a line each, as
    they come, until it closes stdout; HUNG last, the child killed, when
    nothing comes for hang_seconds. Past deadline (time.monotonic) the
    child is killed and TimeoutError raised."""
    fd, pending = child.stdout.fileno(), b""
    while True:
        if deadline is not None and time.monotonic() > deadline:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise TimeoutError("the fuzz run passed its deadline")
        ready, _, _ = select.select([fd], [], [], hang_seconds)
        if not ready:
            os.killpg(child.pid, signal.SIGKILL)
            yield HUNG
            return
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield json.loads(line)


def run(
    module: str,
    cases: int,
    seed: int = 0,
    start: int = 0,
    case_seconds: float | None = None,
    hang_seconds: float = 60.0,
    timeout: float | None = None,
    log=None,
) -> Report:
    """Run cases start..start+cases-1 of the fuzzer module; timeout: seconds
    for the whole run (TimeoutError past it)."""
    report = Report(module.rsplit(".", 1)[-1])
    deadline = time.monotonic() + timeout if timeout else None
    t0 = time.perf_counter()
    next_case, stop = start, start + cases
    while next_case < stop:
        command = [
            sys.executable,
            "-m",
            "fuzz.harness",
            "--worker",
            module,
            "--seed",
            str(seed),
            "--start",
            str(next_case),
            "--cases",
            str(stop - next_case),
        ]
        if case_seconds:
            command += ["--case-seconds", str(case_seconds)]
        with tempfile.TemporaryFile() as err:
            # stdin is empty: a case that reads it (toy-generate --chat with no prompt) meets its end
            child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                env=child_env(),
                start_new_session=True,
            )
            current, hung = None, False
            for msg in watch_child(child, hang_seconds, deadline):
                if msg == HUNG:
                    hung = True
                elif "start" in msg:
                    current = msg["start"]
                else:
                    current = None
                    report.cases += 1
                    why = _judge(msg, report)
                    if why is not None:
                        report.failures.append((msg["case"], msg["what"], why))
                    if log:
                        print(f"case {msg['case']}: {why or 'ok'}: {msg['what'][:200]}", file=log)
                    next_case = msg["case"] + 1
            child.wait()
            if current is None and child.returncode == 0:
                break
            if current is None:  # died between cases: the harness itself failed
                err.seek(0)
                raise RuntimeError(f"{report.name} worker failed: {err.read().decode()[-2000:]}")
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            why = "hung" if hung else f"crashed (exit {child.returncode}): {tail}"
            report.cases += 1
            report.failures.append((current, f"case {current} of seed {seed}", why))
            next_case = current + 1
    report.seconds = time.perf_counter() - t0
    return report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fuzz.harness", description=__doc__.split("\n\n")[0])
    p.add_argument("module", help="the fuzzer, e.g. fuzz.fuzz_cli (run from tests/)")
    p.add_argument("--cases", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0)
    p.add_argument(
        "--case-seconds",
        type=float,
        default=None,
        help="send SIGINT to a command after this long (a run may be legitimately long)",
    )
    p.add_argument("--hang-seconds", type=float, default=60.0)
    p.add_argument("-v", "--verbose", action="store_true", help="a line per case")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args.module, args.seed, args.start, args.start + args.cases, args.case_seconds)
    report = run(
        args.module,
        args.cases,
        args.seed,
        args.start,
        args.case_seconds,
        args.hang_seconds,
        log=sys.stderr if args.verbose else None,
    )
    print(report.summary())
    if report.failures:
        print(report.details())
    for message, count in report.messages.most_common(20):
        print(f"{count:6d}  {message}")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
