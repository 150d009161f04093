"""What a toy-train run directory generates with: its model, adapter and
tokenizer files, named in its config.json."""

from __future__ import annotations

import json
from pathlib import Path

from ..core.errors import InputError
from ..recipes import ADAPTER_RECIPES
from .model import GGUFModel, load_model


def run_files(run) -> tuple[Path, Path | None, Path | None]:
    """What a toy-train run directory generates with: (model GGUF, adapter GGUF
    or None, GGUF of the tokenizer when not the model's own or None).

    lora and instruct runs: config.json's "base" and the run's adapter.gguf;
    from-scratch, full and warm-start runs: the run's model.gguf (a
    warm-start model with its donor's tokenizer). InputError in one line,
    naming the file, for anything missing or damaged."""
    run = Path(run)
    if not run.is_dir():
        raise InputError(f"--run {run} is not a directory: give a toy-train run directory (runs/<run_id>)")
    config_path = run / "config.json"
    damaged = f"{config_path} is damaged"
    try:
        config = json.loads(config_path.read_bytes())
    except FileNotFoundError:
        raise InputError(f"{config_path} not found: --run takes the directory of a toy-train run") from None
    except OSError as err:
        raise InputError(f"cannot read {config_path}: {err.strerror}") from None
    except (ValueError, RecursionError):
        raise InputError(f"{damaged}: it is not JSON") from None
    if not isinstance(config, dict) or not isinstance(config.get("recipe"), str):
        raise InputError(f"{damaged}: it names no recipe")
    recipe = config["recipe"]
    if recipe == "vit-tiny":
        raise InputError(f"{run} is a vit-tiny run (an image classifier): toy-generate runs language models")

    def named_file(key: str, what: str) -> Path:
        value = config.get(key)
        if not isinstance(value, str) or not value or "\0" in value:
            raise InputError(f"{damaged}: its {key!r} is not a file name")
        path = Path(value)
        if not path.is_file():
            raise InputError(f"{what} {path}, named in {config_path}, is not a file")
        return path

    def written(name: str) -> Path:
        path = run / name
        if not path.is_file():
            raise InputError(f"{run} has no {name}: the run has not finished (toy-train --resume {run})")
        return path

    if recipe in ADAPTER_RECIPES:
        base = named_file("base", "the base model")
        return base, written("adapter.gguf"), None
    model = written("model.gguf")
    donor = named_file("donor", "the donor, whose tokenizer the model uses,") if recipe == "warm-start" else None
    return model, None, donor


def load_run(run, device: str = "cpu", threads: int | None = None) -> GGUFModel:
    """load_model on what a toy-train run directory holds (run_files)."""
    model, adapter, tokenizer_path = run_files(run)
    return load_model(model, adapter, device, threads, tokenizer_path=tokenizer_path)
