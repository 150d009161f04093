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
checkpoint (the previous one until the rename lands).
"""
from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from .errors import InputError
from .files import write_whole
from .session import KIND_MOMENT, KIND_PARAM

FORMAT = "toy/checkpoint-v1"
DIRNAME = "checkpoint"
LATEST = "latest.json"
_STATE_KEY = "__state__"


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
    """The checkpoint folder of one run directory."""

    def __init__(self, run_path: Path, keep: int = 1):
        self.path = Path(run_path) / DIRNAME
        self.keep = keep

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
        write_whole(self.path / LATEST, (json.dumps({"file": name, "step": state["step"]}) + "\n").encode(),
                    sync=True)
        self._prune()
        return self.path / name

    def _prune(self) -> None:
        files = sorted(self.path.glob("step-*.npz"))
        for old in files[:-self.keep]:
            old.unlink()
        for tmp in self.path.glob("*.tmp"):
            tmp.unlink()


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
    try:
        name = json.loads(latest.read_text())["file"]
    except (ValueError, KeyError, TypeError, OSError):
        raise InputError(f"checkpoint pointer {latest} is unreadable") from None
    return folder / Path(name).name


class Checkpoint:
    """A checkpoint file read back: .state (the JSON record) and .tensors."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            with np.load(self.path, allow_pickle=False) as npz:
                self.tensors = {name: npz[name] for name in npz.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as err:
            raise InputError(f"checkpoint {self.path} is unreadable ({err})") from None
        record = self.tensors.pop(_STATE_KEY, None)
        try:
            self.state = json.loads(record.tobytes()) if record is not None else {}
        except ValueError:
            self.state = {}
        if self.state.get("format") != FORMAT:
            raise InputError(f"{self.path} is not a toy checkpoint ({FORMAT})")

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
