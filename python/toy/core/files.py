"""Files written whole or not at all: under a temporary name beside the
target, renamed onto it only once complete, so that a failure or a kill
never leaves a half-written file where a reader looks for it."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError


@contextmanager
def replacing(path):
    """The temporary path to write path's new content to: when the block
    ends it replaces path, when the block fails it is removed."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    _clear_stale(tmp)
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def write_whole(path, data: bytes, sync: bool = False) -> None:
    """path's content replaced by data. sync: on disk before the rename, and
    the rename on disk before returning (a crash leaves the old or the new)."""
    path = Path(path)
    with replacing(path) as tmp:
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


def _clear_stale(tmp: Path) -> None:
    """Remove what an earlier, killed write left at tmp -- a file, or a link,
    which is removed itself, so that nothing is written through it. A folder
    there is not ours to remove."""
    if tmp.is_symlink() or tmp.is_file():
        tmp.unlink()
    elif tmp.exists():
        raise InputError(
            f"cannot write {tmp.with_name(tmp.name[: -len('.tmp')])}: a folder is in the way at {tmp}; move it away"
        )
