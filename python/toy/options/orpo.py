"""toy-train orpo: odds-ratio preference optimisation of LoRA adapters on a
GGUF: the chosen answers' cross-entropy plus an odds-ratio term, no reference."""
from __future__ import annotations

from ..recipes import ORPO
from . import preference

# measured on the sample pairs (README, "Preference tuning")
DEFAULT_LR, DEFAULT_EPOCHS = 5e-4, 3
HELP = "preference-tune LoRA adapters with ORPO (pairs of answers, no reference model)"


def add_options(p) -> None:
    preference.add_options(p, "ORPO's lambda (TRL's beta): the weight of the odds-ratio term "
                              "beside the chosen answers' cross-entropy", DEFAULT_LR, DEFAULT_EPOCHS)


def check(args) -> None:
    preference.check(args)


def prepare(args):
    return preference.prepare(args, ORPO)
