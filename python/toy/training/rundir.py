"""The run directory: config, per-step events, final weights, loss plot.

Every file is written whole (temp file + rename) except events.jsonl, which
grows a line per step and is flushed each time, so a run that fails halfway
leaves everything it wrote readable.

A run never writes into a directory that holds something already, unless
it is a --resume of the run there or --overwrite is given. --overwrite
removes the files a run writes (RUN_FILES, and the checkpoints listed as
written by that run) before the new run starts; anything else is kept.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..core.errors import InputError
from ..core.files import write_whole
from . import checkpoint


def new_run_id(recipe: str, seed: int) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{recipe}-s{seed}"


def default_path(recipe: str, seed: int) -> Path:
    """runs/<run_id>, numbered on when a run of the same second has it."""
    run_id = new_run_id(recipe, seed)
    path, n = Path("runs") / run_id, 1
    while path.exists():
        n += 1
        path = Path("runs") / f"{run_id}-{n}"
    return path


class RunDir:
    def __init__(self, path: Path, run_id: str, events_mode: str = "w"):
        self.path, self.run_id = path, run_id
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self._events = open(self.path / "events.jsonl", events_mode, encoding="utf-8")
        except OSError as err:
            raise InputError(
                f"cannot write the run directory {path}: {err.strerror} (give a writable --out DIR)"
            ) from None

    @classmethod
    def create(cls, out: str | None, recipe: str, seed: int, overwrite: bool = False) -> RunDir:
        if out is not None:
            path = Path(out)
            _claim(path, overwrite)
            return cls(path, path.name)
        path = default_path(recipe, seed)
        return cls(path, path.name)

    @classmethod
    def reopen(cls, path: Path, through_step: int) -> RunDir:
        """A run directory to resume after step through_step: the events of
        later steps (written after the checkpoint) are dropped, and lines that
        do not parse (cut short by a kill, or damaged)."""
        events = Path(path) / "events.jsonl"
        for name in (events, events.with_name(events.name + ".tmp")):
            if name.is_symlink() or (name.exists() and not name.is_file()):
                raise InputError(
                    f"{name} is not a file (a folder or a link): move it out of the run directory and resume again"
                )
        kept = []
        try:
            lines = events.read_bytes().splitlines() if events.exists() else []
        except OSError as err:
            raise InputError(f"cannot read {events}: {err.strerror}") from None
        for line in lines:
            try:
                event = json.loads(line)
                step = event.get("step", 0)
                if step <= through_step:
                    kept.append(line + b"\n")
            except (ValueError, RecursionError, AttributeError, TypeError):
                continue  # not JSON, not an object, or a step that is not a number
        write_whole(events, b"".join(kept))
        return cls(Path(path), Path(path).name, events_mode="a")

    def write_json(self, name: str, obj) -> None:
        write_whole(self.path / name, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())

    def write_text(self, name: str, text: str) -> None:
        write_whole(self.path / name, text.encode())

    def event(self, **fields) -> None:
        self._events.write(json.dumps(fields, sort_keys=True) + "\n")
        self._events.flush()

    def close(self) -> None:
        self._events.close()


# what a run writes at the top of its directory (weights: one of the last three)
RUN_FILES = ("config.json", "events.jsonl", "loss.svg", "model.gguf", "adapter.gguf", "merged.gguf")


def _claim(path: Path, overwrite: bool) -> None:
    """Make path ready for a new run: missing or empty, or (overwrite) with
    the files of the run there removed. Refuses anything else."""
    if path.exists() and not path.is_dir():
        raise InputError(f"--out {path} is a file, not a directory")
    try:
        entries = sorted(p.name for p in path.iterdir()) if path.is_dir() else []
    except OSError as err:
        raise InputError(f"cannot read the run directory {path}: {err.strerror}") from None
    if not entries:
        return
    if not overwrite:
        what = "a run" if "config.json" in entries else f"{len(entries)} entries ({', '.join(entries[:3])}...)"
        raise InputError(
            f"--out {path} already holds {what}: continue that run with --resume {path}, "
            "choose another --out, or give --overwrite to replace its run files"
        )
    # checked before anything goes: a refusal leaves the folder as it was
    for name in RUN_FILES:
        if (path / name).is_dir() and not (path / name).is_symlink():
            raise InputError(
                f"--out {path} holds {name}, a folder where toy writes a file: move it out "
                "of the run directory and start again"
            )
    folder = checkpoint.Checkpoints(path)
    folder.check_writable()
    try:
        for name in RUN_FILES:
            (path / name).unlink(missing_ok=True)
        folder.discard_run()
    except OSError as err:
        raise InputError(f"cannot clear the run directory {path} for --overwrite: {err.strerror}") from None


class QuietRunDir:
    """What a data-parallel rank other than 0 holds in place of the run
    directory: rank 0 writes it, the others write nothing."""

    path = None
    run_id = None

    def write_json(self, name: str, obj) -> None:
        pass

    def write_text(self, name: str, text: str) -> None:
        pass

    def event(self, **fields) -> None:
        pass

    def close(self) -> None:
        pass
