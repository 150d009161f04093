"""toy's errors, and the contract of its console commands for failures.

Every error toy raises is a ToyError. Its status is the tinynn status code
of the C call that failed (enum tnn_status, read from tinynn.h through the
binding's declarations in _ffi.py), or TNN_OK for toy's own checks.

The commands (toy-train, toy-generate) end in one of three ways on failure:

    bad input (InputError, a device not built or without hardware, an
    OSError about a path: too long, missing, a loop of links, no permission)
                                                 one line "PROG: error: ...", exit 2
    a failure inside the run (any other ToyError or OSError: a full disk)
                                                 one line "PROG: failed: ...", exit 1
    Ctrl-C                                       one line "PROG: interrupted", exit 130

A training run stopped by SIGINT or SIGTERM (after its checkpoint) exits
128 + the signal's number, as a shell reports a process the signal ended.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
import tempfile
from contextlib import contextmanager

from .ffi import enum_values
from .launcher import launched_rank

_STATUS = enum_values("tnn_status")
TNN_OK = _STATUS["TNN_OK"]
TNN_ERR_ARG = _STATUS["TNN_ERR_ARG"]  # a bad argument: handle, shape, size, value
TNN_ERR_STATE = _STATUS["TNN_ERR_STATE"]  # a call out of order
TNN_ERR_BACKEND = _STATUS["TNN_ERR_BACKEND"]
TNN_ERR_ALLOC = _STATUS["TNN_ERR_ALLOC"]
TNN_ERR_IO = _STATUS["TNN_ERR_IO"]  # a file could not be read or written

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
# OSError numbers that say a path given is unusable (bad input, exit 2); any
# other (a full disk, an I/O error) is a failure of the run (exit 1)
PATH_ERRNOS = {
    errno.ENAMETOOLONG,
    errno.ENOENT,
    errno.ENOTDIR,
    errno.EISDIR,
    errno.EACCES,
    errno.EPERM,
    errno.ELOOP,
    errno.EROFS,
    errno.EEXIST,
    errno.ENXIO,
    errno.ENODEV,
}
# what a training run stopped by a signal exits with
EXIT_STOPPED = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: 128 + signal.SIGTERM}


def one_line(text, limit: int = 160) -> str:
    """text with its line breaks and runs of spaces folded, cut to `limit` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ToyError(RuntimeError):
    """An error reported by tinynn (status: its tnn_status) or by toy's own
    checks (status TNN_OK unless the check stands in for a C one)."""

    def __init__(self, message: str, status: int = TNN_OK):
        super().__init__(message)
        self.status = status


class DeviceNotBuilt(ToyError):
    """The library for the requested device was not built into this install."""


class NoDevice(ToyError):
    """The device's library is installed, but it finds no device to run on
    (no driver, or a GGML_VK_VISIBLE_DEVICES naming none): bad input, as a
    device not built."""


class InputError(ToyError):
    """Bad input from the user: the CLI reports it in one line and exits 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is an InputError: one line, exit 2, with
    where to look (argparse's own prints the usage first)."""

    def error(self, message):
        raise InputError(f"{message} (see {self.prog} --help)")


@contextmanager
def refusals_as_input_errors():
    """Inside: a ToyError by which the C core refused an argument or a file
    (TNN_ERR_ARG, TNN_ERR_IO) becomes an InputError, so that a command
    reports a configuration or file it cannot use as bad input."""
    try:
        yield
    except ToyError as err:
        if err.status in (TNN_ERR_ARG, TNN_ERR_IO):
            raise InputError(str(err)) from None
        raise


@contextmanager
def c_stderr_captured(said: list[str], limit: int | None = None):
    """File descriptor 2 into a temporary file for the block, what was
    written there (at most limit bytes) appended to said, decoded. C
    libraries -- libtiff inside Pillow, ggml -- print their complaints on
    stderr themselves; inside this block they cannot put lines before a
    command's one line, and the message can quote them instead."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no fd 2 to borrow (stderr closed)
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            said.append(sink.read(limit if limit is not None else -1).decode("utf-8", "replace"))


def _on_one_line(err) -> str:
    """The message with the line breaks a name in it may carry (a file called
    "a\\nb") shown as escapes: the verdict stays one line."""
    return str(err).replace("\r", "\\r").replace("\n", "\\n")


def run_command(prog: str, body) -> int:
    """Run a console command's body with the contract above; returns the exit status."""
    if launched_rank() > 0:
        prog = f"{prog}: rank {launched_rank()}"  # data parallel: rank 0 speaks plainly
    try:
        return body()
    except (InputError, DeviceNotBuilt, NoDevice) as err:
        print(f"{prog}: error: {_on_one_line(err)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ToyError as err:
        print(f"{prog}: failed: {_on_one_line(err)}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader of stdout went away (`| head`): stop quietly, as other tools do
        sys.stdout = open(os.devnull, "w")
        return EXIT_FAILED
    except OSError as err:
        # what toy's own checks did not foresee about a path: one line still
        where = f"{one_line(err.filename, 80)}: " if err.filename else ""
        if err.errno in PATH_ERRNOS:
            print(f"{prog}: error: {where}{err.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"{prog}: failed: {where}{err.strerror or one_line(err)}", file=sys.stderr)
        return EXIT_FAILED
