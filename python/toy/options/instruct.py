"""toy-train instruct: LoRA on a chat GGUF over JSONL conversations, the
loss on the assistant's turns."""

from __future__ import annotations

from dataclasses import dataclass

from ..datasets import samples
from ..datasets.instruct import INSTRUCT_NAMES, read_jsonl
from ..datasets.records import parse_columns
from ..native.session import LORA_TARGETS
from . import common as options
from . import lora

HELP = "LoRA on prompt/response or chat JSONL, the loss on the assistant's turns"


# Defaults measured to teach a small set of new facts without tuning on
# SmolLM2-135M and Gemma 3 270M (benchmarks/results/defaults_study.md):
# rank 16 on all seven projections, LR 1e-3 after a short warmup, cosine-decayed
# to a tenth, 8 epochs. Rank 8 on q alone (lora's defaults) learned none.
@dataclass(kw_only=True)
class InstructOptions(options.AdapterOptions, options.DataOptions):
    recipe: str = "instruct"
    lr: float = 1e-3
    clip_norm: float = 1.0
    rank: int = 16
    targets: str = ",".join(LORA_TARGETS)  # all seven projections
    epochs: int = 8
    warmup: int = 4
    min_lr: float | None = 1e-4


def add_options(p) -> None:
    defaults = InstructOptions()
    options.add_training_options(p, defaults, steps_help=options.DATA_STEPS_HELP)
    lora.add_adapter_options(p, defaults)
    options.add_instruct_data_options(
        p, defaults, "(default: the 30 made-up facts toy ships; toy-train samples writes them out as facts.jsonl)"
    )


def check(args: InstructOptions) -> None:
    options.check_instruct_data(args)
    if args.data is None:
        args.data = str(samples.path("facts.jsonl"))


def prepare(args: InstructOptions) -> options.Prepared:
    conversations = read_jsonl(
        args.data, parse_columns(args.columns, INSTRUCT_NAMES)
    )  # bad data fails before the model loads
    source = options.instruct_source(args, options.base_model(args), conversations)
    recipe, _, config = lora.realize(args, packed=source.packed)
    options.record_instruct_data(args, source, config)
    return recipe, source, config, "adapter.gguf"


COMMAND = options.RecipeCommand(HELP, InstructOptions, add_options, check, prepare)
