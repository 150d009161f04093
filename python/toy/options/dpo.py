"""toy-train dpo: direct preference optimisation of LoRA adapters on a GGUF,
the frozen base as its own reference."""
from __future__ import annotations

from ..recipes import DPO
from . import preference

# measured on the sample pairs (README, "Preference tuning")
DEFAULT_LR, DEFAULT_EPOCHS = 2e-4, 1
HELP = "preference-tune LoRA adapters with DPO (pairs of answers, the base as reference)"


def add_options(p) -> None:
    preference.add_options(p, "DPO's beta: how far the tuned model may move from the base "
                              "(the scale of the implicit reward)", DEFAULT_LR, DEFAULT_EPOCHS)


def check(args) -> None:
    preference.check(args)


def prepare(args):
    return preference.prepare(args, DPO)
