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
version of toy writes is refused in one line, never half-used.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path

import numpy as np

from .errors import InputError, one_line
from .files import write_whole
from .session import KIND_MOMENT, KIND_PARAM

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
    def resuming(cls, checkpoint: "Checkpoint", keep: int) -> "Checkpoints":
        """The folder of the checkpoint a run resumes from, with the files the run wrote."""
        folder = cls(checkpoint.run_path, keep)
        folder.written = [name for name in _pointer(folder.path / LATEST).get("written", [checkpoint.path.name])
                          if (folder.path / name).is_file()]
        if checkpoint.path.name not in folder.written:
            folder.written.append(checkpoint.path.name)
        return folder

    def discard_run(self) -> None:
        """Remove the checkpoints of the run that wrote this folder (the files
        latest.json lists, and it): --overwrite, before a new run starts there."""
        latest = self.path / LATEST
        if not latest.is_file():
            return
        try:
            pointer = _pointer(latest)
        except InputError:
            pointer = {"written": []}       # unreadable: its files are not known, so none go
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
        kept, pruned = self.written[-self.keep:], self.written[:-self.keep]
        pointer = {"file": name, "step": state["step"], "written": kept}
        write_whole(self.path / LATEST, (json.dumps(pointer) + "\n").encode(), sync=True)
        # only now, with latest.json naming the new file, may older ones go
        for old in pruned:
            (self.path / old).unlink(missing_ok=True)
        self.written = kept
        return self.path / name


def _pointer(latest: Path) -> dict:
    """latest.json read back: {"file": a checkpoint's name, "written": [names]}."""
    try:
        pointer = json.loads(latest.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        raise InputError(f"checkpoint pointer {latest} is unreadable") from None
    files = pointer.get("written", []) if isinstance(pointer, dict) else None
    if (not isinstance(pointer, dict) or not isinstance(pointer.get("file"), str)
            or not CHECKPOINT_NAME.fullmatch(pointer["file"]) or not isinstance(files, list)
            or not all(isinstance(f, str) and CHECKPOINT_NAME.fullmatch(f) for f in files)):
        raise InputError(f"checkpoint pointer {latest} does not name a checkpoint (step-NNNNNNNN.npz)")
    return pointer


def find_checkpoint(where) -> Path:
    """The checkpoint file that --resume WHERE names: a run directory, its
    checkpoint folder (the newest complete file) or one step-*.npz file."""
    where = Path(where)
    if where.is_file():
        return where
    if not where.exists():
        raise InputError(f"nothing to resume at {where}: no such run directory")
    folder = where / DIRNAME if (where / DIRNAME).is_dir() else where
    latest = folder / LATEST
    if not latest.is_file():
        raise InputError(f"nothing to resume at {where}: no checkpoint was written there "
                         "(runs save one every --save-every steps and on Ctrl-C)")
    path = folder / _pointer(latest)["file"]
    if not path.is_file():
        raise InputError(f"{latest} names {path.name}, which is not there: the checkpoint folder was "
                         "changed by hand; resume from one of its step-*.npz files")
    return path


# what a checkpoint's state holds, by key: the JSON types it must have
_STATE_TYPES = {"step": int, "steps": int, "losses": list, "source": dict, "args": dict, "fingerprints": dict}


def _check_state(state: dict, path: Path) -> None:
    for key, kind in _STATE_TYPES.items():
        if not isinstance(state.get(key), kind) or isinstance(state.get(key), bool):
            raise InputError(f"checkpoint {path} is damaged: its '{key}' is missing or not a {kind.__name__}")
    step, losses = state["step"], state["losses"]
    if not 1 <= step <= state["steps"] or len(losses) != step or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in losses):
        raise InputError(f"checkpoint {path} is damaged: step {step} of {state['steps']} "
                         f"with {len(losses)} losses")


class Checkpoint:
    """A checkpoint file read back: .state (the JSON record) and .tensors."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            with np.load(self.path, allow_pickle=False) as npz:
                self.tensors = {name: npz[name] for name in npz.files}
            record = self.tensors.pop(_STATE_KEY)
            self.state = json.loads(record.tobytes())
        except Exception as err:       # whatever numpy's zip and format readers raise on a bad file
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
                raise InputError(f"checkpoint {self.path} does not match the model: {name} is "
                                 f"{self.tensors[name].shape}, the model's {shape}")
            session.upload(handle, self.tensors[name])
