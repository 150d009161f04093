"""The run directory: config, per-step events, final weights, loss plot.

Every file is written whole (temp file + rename) except events.jsonl, which
grows a line per step and is flushed each time, so a run that fails halfway
leaves everything it wrote readable.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def new_run_id(recipe: str, seed: int) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{recipe}-s{seed}"


class RunDir:
    def __init__(self, path: Path, run_id: str):
        self.path, self.run_id = path, run_id
        self.path.mkdir(parents=True, exist_ok=True)
        self._events = open(self.path / "events.jsonl", "w", encoding="utf-8")

    @classmethod
    def create(cls, out: str | None, recipe: str, seed: int) -> "RunDir":
        if out is not None:
            path = Path(out)
            return cls(path, path.name)
        run_id = new_run_id(recipe, seed)
        path, n = Path("runs") / run_id, 1
        while path.exists():
            n += 1
            path = Path("runs") / f"{run_id}-{n}"
        return cls(path, path.name)

    def write_json(self, name: str, obj) -> None:
        write_atomic(self.path / name, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())

    def write_text(self, name: str, text: str) -> None:
        write_atomic(self.path / name, text.encode())

    def event(self, **fields) -> None:
        self._events.write(json.dumps(fields, sort_keys=True) + "\n")
        self._events.flush()

    def close(self) -> None:
        self._events.close()
