"""Checkpoints: a run's whole training state, so that a stopped run resumes
and prints the very loss lines it would have printed.

A checkpoint is one file, runs/<id>/checkpoint/step-<k>.npz, holding the
trainable tensors and their AdamW moments (F32, by tensor name) and a JSON
record of everything else: the step, the losses so far, the data source's
position and RNG state, the resolved arguments and the fingerprints of the
model and data files. `latest.json` names the newest complete file.

Writes are crash-safe: the file is written under a temporary name, synced
and renamed, then latest.json is replaced the same way, and only then are
older files pruned. A kill at any point leaves latest.json naming a complete
checkpoint (the previous one until the rename lands). Pruning deletes only
checkpoints this run wrote: latest.json lists them ("written"), so a folder
that also holds other files -- another run's, the user's -- loses none.

A checkpoint is input like any file: one that does not hold what this
version of toy writes is refused in one line, never half-used -- entries
that inflate past the file's size (toy stores them uncompressed), a record
that disagrees with itself. A resume continues the run a checkpoint is in:
one outside a run's checkpoint folder (a copied step file) is refused, and
so is a folder where a name toy writes is taken by a folder or a link.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from pathlib import Path

import numpy as np

from ..core.errors import InputError, one_line
from ..core.files import write_whole
from ..native.session import KIND_MOMENT, KIND_PARAM

FORMAT = "toy/checkpoint-v1"
DIRNAME = "checkpoint"
LATEST = "latest.json"
_STATE_KEY = "__state__"
CHECKPOINT_NAME = re.compile(r"step-\d{8}\.npz")


def file_sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            digest.update(chunk)
    return digest.hexdigest()


def training_tensors(session) -> dict[str, int]:
    """Name -> handle of every tensor a step changes: parameters and AdamW moments."""
    infos = [session.info(h) for h in session.handles()]
    return {info.name: info.handle for info in infos if info.kind in (KIND_PARAM, KIND_MOMENT)}


class Checkpoints:
    """The checkpoint folder of one run directory. written: the checkpoint
    files this run wrote before (a resumed run's, from latest.json)."""

    def __init__(self, run_path: Path, keep: int = 1, written: list[str] | None = None):
        self.path = Path(run_path) / DIRNAME
        self.keep = keep
        self.written = list(written or [])

    @classmethod
    def resuming(cls, checkpoint: Checkpoint, keep: int) -> Checkpoints:
        """The folder of the checkpoint a run resumes from, with the files the
        run wrote. Refuses a checkpoint outside a run's checkpoint folder: the
        resume would write the run into whatever folder holds that one."""
        folder = cls(checkpoint.run_path, keep)
        if checkpoint.path.parent.name != DIRNAME or not (checkpoint.run_path / "config.json").is_file():
            raise InputError(
                f"{checkpoint.path} is not in a run's {DIRNAME} folder (RUN/{DIRNAME}/, beside "
                "the run's config.json): resume the run directory it was written in"
            )
        folder.check_writable()
        latest = folder.path / LATEST
        try:
            written = _pointer(latest).get("written", []) if latest.exists() else []
        except InputError:
            written = []  # unreadable (a resume from a file named by hand): none of its files go
        folder.written = [name for name in written if (folder.path / name).is_file()]
        if checkpoint.path.name not in folder.written:
            folder.written.append(checkpoint.path.name)
        return folder

    def check_writable(self) -> None:
        """Refuse a folder where a name toy writes (a checkpoint, latest.json or
        their temporary files) is taken by a folder or a link: the save would
        fail halfway through the run, or write through the link."""
        try:
            entries = list(self.path.iterdir()) if self.path.is_dir() else []
        except OSError as err:
            raise InputError(f"cannot read the checkpoint folder {self.path}: {err.strerror}") from None
        for entry in entries:
            name = entry.name.removesuffix(".tmp")
            toys = CHECKPOINT_NAME.fullmatch(name) or name == LATEST
            if toys and (entry.is_symlink() or not entry.is_file()):
                what = "link" if entry.is_symlink() else "folder"
                raise InputError(
                    f"the checkpoint folder {self.path} holds {entry.name}, a {what} where toy "
                    "writes a file: move it out of the folder and start the command again"
                )

    def discard_run(self) -> None:
        """Remove the checkpoints of the run that wrote this folder (the files
        latest.json lists, and it): --overwrite, before a new run starts there."""
        latest = self.path / LATEST
        if not latest.is_file():
            return
        try:
            pointer = _pointer(latest)
        except InputError:
            pointer = {"written": []}  # unreadable: its files are not known, so none go
        for name in pointer.get("written", [pointer.get("file")] if "file" in pointer else []):
            (self.path / name).unlink(missing_ok=True)
        latest.unlink()

    def save(self, session, state: dict) -> Path:
        """Write the session's training tensors and state (JSON-able, with 'step')."""
        self.path.mkdir(parents=True, exist_ok=True)
        arrays = {name: session.download(h) for name, h in training_tensors(session).items()}
        record = json.dumps({"format": FORMAT, **state}, sort_keys=True).encode()
        arrays[_STATE_KEY] = np.frombuffer(record, dtype=np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        name = f"step-{state['step']:08d}.npz"
        write_whole(self.path / name, buffer.getvalue(), sync=True)
        self.written = [n for n in self.written if n != name] + [name]
        kept, pruned = self.written[-self.keep :], self.written[: -self.keep]
        pointer = {"file": name, "step": state["step"], "written": kept}
        write_whole(self.path / LATEST, (json.dumps(pointer) + "\n").encode(), sync=True)
        # only now, with latest.json naming the new file, may older ones go
        for old in pruned:
            (self.path / old).unlink(missing_ok=True)
        self.written = kept
        return self.path / name


# the fix when latest.json cannot say which checkpoint is the newest
_FROM_A_FILE = "resume from one of the folder's step-*.npz files (toy-train --resume RUN/checkpoint/step-N.npz)"


def _pointer(latest: Path) -> dict:
    """latest.json read back: {"file": a checkpoint's name, "written": [names]}."""
    try:
        pointer = json.loads(latest.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        raise InputError(f"checkpoint pointer {latest} is unreadable: {_FROM_A_FILE}") from None
    files = pointer.get("written", []) if isinstance(pointer, dict) else None
    if (
        not isinstance(pointer, dict)
        or not isinstance(pointer.get("file"), str)
        or not CHECKPOINT_NAME.fullmatch(pointer["file"])
        or not isinstance(files, list)
        or not all(isinstance(f, str) and CHECKPOINT_NAME.fullmatch(f) for f in files)
    ):
        raise InputError(f"checkpoint pointer {latest} does not name a checkpoint (step-NNNNNNNN.npz): {_FROM_A_FILE}")
    return pointer


def _names(folder: Path) -> list[str]:
    try:
        return [p.name for p in folder.iterdir()]
    except OSError:
        return []


def find_checkpoint(where) -> Path:
    """The checkpoint file that --resume WHERE names: a run directory, its
    checkpoint folder (the newest complete file) or one step-*.npz file."""
    where = Path(where)
    if where.name == LATEST and where.is_file():
        where = where.parent  # the pointer itself: the folder it points in
    if where.is_file():
        return where
    if not where.exists():
        raise InputError(f"nothing to resume at {where}: no such run directory")
    folder = where / DIRNAME if (where / DIRNAME).is_dir() else where
    latest = folder / LATEST
    if not latest.is_file():
        if any(CHECKPOINT_NAME.fullmatch(name) for name in _names(folder)):
            raise InputError(f"{folder} has no {LATEST} naming its newest checkpoint: {_FROM_A_FILE}")
        raise InputError(
            f"nothing to resume at {where}: no checkpoint was written there "
            "(runs save one every --save-every steps and on Ctrl-C)"
        )
    path = folder / _pointer(latest)["file"]
    if not path.is_file():
        raise InputError(
            f"{latest} names {path.name}, which is not there: the checkpoint folder was "
            "changed by hand; resume from one of its step-*.npz files"
        )
    return path


# what a checkpoint's state holds, by key: the JSON types it must have
_STATE_TYPES = {"step": int, "steps": int, "losses": list, "source": dict, "args": dict, "fingerprints": dict}


def _check_state(state: dict, path: Path) -> None:
    for key, kind in _STATE_TYPES.items():
        if not isinstance(state.get(key), kind) or isinstance(state.get(key), bool):
            raise InputError(f"checkpoint {path} is damaged: its '{key}' is missing or not a {kind.__name__}")
    # the run's options, as its command line gave them: every one a single value
    odd = next(
        (key for key, value in state["args"].items() if not isinstance(value, (str, int, float, bool, type(None)))),
        None,
    )
    if odd is not None:
        raise InputError(
            f"checkpoint {path} is damaged: its option {str(odd)[:40]!r} holds "
            f"{str(state['args'][odd])[:40]!r}, not a value the command line gives"
        )
    step, losses = state["step"], state["losses"]
    if not 1 <= step <= state["steps"] or len(losses) != step:
        raise InputError(f"checkpoint {path} is damaged: step {step} of {state['steps']} with {len(losses)} losses")
    # the run's options hold the total it resolved (from --epochs too), as "steps" does;
    # options without it take that total, not --steps' default (None: "from the data")
    saved_steps = state["args"].setdefault("steps", state["steps"])
    if type(saved_steps) is not int or saved_steps != state["steps"]:
        raise InputError(
            f"checkpoint {path} is damaged: its --steps {str(saved_steps)[:40]!r} is not "
            f"its run's {state['steps']} steps"
        )
    # floats, as toy writes them (NaN and infinity included: a run may diverge); an
    # integer past float's range would only fail when the loss plot is drawn
    if not all(type(x) is float for x in losses):
        bad = next(x for x in losses if type(x) is not float)
        raise InputError(f"checkpoint {path} is damaged: its losses hold {str(bad)[:40]!r}, not a number")


def _check_sizes(file, path: Path) -> None:
    """Refuse an archive whose entries claim more bytes than the file holds:
    toy stores them uncompressed, so only a zip bomb inflates past it (and
    it would be read whole into memory before anything else is checked)."""
    with zipfile.ZipFile(file) as archive:
        claimed = sum(info.file_size for info in archive.infolist())
    if claimed > os.fstat(file.fileno()).st_size:
        raise InputError(
            f"checkpoint {path} is damaged: its entries claim {claimed:,} bytes, more than "
            "the file holds (toy stores them uncompressed); start again without --resume"
        )
    file.seek(0)


class Checkpoint:
    """A checkpoint file read back: .state (the JSON record) and .tensors."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            with open(self.path, "rb") as file:
                _check_sizes(file, self.path)
                with np.load(file, allow_pickle=False) as npz:
                    self.tensors = {name: npz[name] for name in npz.files}
            record = self.tensors.pop(_STATE_KEY)
            self.state = json.loads(record.tobytes())
        except InputError:
            raise
        except Exception as err:  # whatever numpy's zip and format readers raise on a bad file
            raise InputError(f"checkpoint {self.path} is unreadable ({one_line(err)})") from None
        if not isinstance(self.state, dict) or self.state.get("format") != FORMAT:
            raise InputError(f"{self.path} is not a toy checkpoint ({FORMAT})")
        _check_state(self.state, self.path)

    @property
    def run_path(self) -> Path:
        """The run directory the checkpoint belongs to."""
        return self.path.parent.parent

    def restore(self, session) -> None:
        """Upload the tensors into a realized, reset session of the same model."""
        expected = training_tensors(session)
        if set(expected) != set(self.tensors):
            missing = sorted(set(expected) ^ set(self.tensors))[0]
            raise InputError(f"checkpoint {self.path} does not match the model: tensor {missing}")
        for name, handle in expected.items():
            shape = session.info(handle).shape
            if self.tensors[name].shape != shape or self.tensors[name].dtype != np.float32:
                raise InputError(
                    f"checkpoint {self.path} does not match the model: {name} is "
                    f"{self.tensors[name].dtype} {self.tensors[name].shape}, the model's "
                    f"float32 {shape}"
                )
            session.upload(handle, self.tensors[name])
