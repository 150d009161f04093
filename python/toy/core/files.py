"""Files written whole or not at all: under a temporary name beside the
target, renamed onto it only once complete, so that a failure or a kill
never leaves a half-written file where a reader looks for it; and a lock
that lets one process at a time write a file that several runs share."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError

try:
    import fcntl
except ImportError:  # Windows: no flock
    fcntl = None  # type: ignore[assignment]


@contextmanager
def replacing(path, tag: str = ""):
    """The temporary path to write path's new content to: when the block
    ends it replaces path, when the block fails it is removed. tag: a part
    of the temporary's name (path.TAG.tmp) unique to the writer, where
    several processes may write path at once; without one (path.tmp) what
    is found there is taken for a killed write's and removed."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{tag}.tmp" if tag else f"{path.name}.tmp")
    _clear_stale(tmp, path)
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def write_whole(path, data: bytes, sync: bool = False, tag: str = "") -> None:
    """path's content replaced by data. sync: on disk before the rename, and
    the rename on disk before returning (a crash leaves the old or the new).
    tag: as replacing's."""
    path = Path(path)
    with replacing(path, tag) as tmp:
        # O_EXCL: a file created here, never one a link planted at tmp points to
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as f:
            f.write(data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
    if sync:
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _clear_stale(tmp: Path, path: Path) -> None:
    """Remove what an earlier, killed write left at tmp -- a file, or a link,
    which is removed itself, so that nothing is written through it. A folder
    there is not ours to remove."""
    if tmp.is_symlink() or tmp.is_file():
        tmp.unlink(missing_ok=True)
    elif tmp.exists():
        raise InputError(f"cannot write {path}: a folder is in the way at {tmp}; move it away")


# flock's refusals where the file system has no locks (some network file systems)
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)


@contextmanager
def locked(path, waiting: Callable[[], None] | None = None) -> Iterator[bool]:
    """An exclusive lock (flock) on the file at path, made for the block and
    removed after it: one process at a time in the block, however many ask at
    once; the others wait, waiting() called once first where given. The lock
    is the kernel's: a process killed in the block lets go of it as it dies,
    so whoever holds it knows that no one else is writing what it guards.

    Yields True; False, at once, where the file system or the platform has
    no locks (then nothing is excluded: callers must still be safe, as with
    unique temporary names and an atomic rename).

    The file is removed while held, and whoever then gets the lock on the
    removed file (it waited on it) finds path gone or another file there and
    tries again: so the lock on the file at path is only ever one process's."""
    fd = _lock(Path(path), waiting) if fcntl is not None else None
    if fd is None:
        yield False
        return
    try:
        yield True
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(fd)


def _lock(path: Path, waiting: Callable[[], None] | None) -> int | None:
    """A descriptor of the file at path, locked (flock, exclusive) while it is
    the file at path; None where the file system has no locks."""
    while True:
        # O_NOFOLLOW: a link planted at path is not followed (ELOOP: an OSError)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if waiting is not None:
                    waiting()
                    waiting = None
                fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            now = os.stat(path, follow_symlinks=False)
            if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                return fd
        except FileNotFoundError:
            pass  # removed by its holder since it was opened
        except OSError as err:
            os.close(fd)
            if err.errno in _NO_LOCKS:
                return None
            raise
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the lock of a file removed since it was opened: try again
