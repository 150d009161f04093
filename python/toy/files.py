"""Files written whole or not at all: under a temporary name beside the
target, renamed onto it only once complete, so that a failure or a kill
never leaves a half-written file where a reader looks for it."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replacing(path):
    """The temporary path to write path's new content to: when the block
    ends it replaces path, when the block fails it is removed."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
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
        with open(tmp, "wb") as f:
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
