"""toy-train instruct: LoRA on a chat GGUF over JSONL conversations, the
loss on the assistant's turns."""
from __future__ import annotations

from ..datasets.instruct import read_jsonl
from ..datasets import samples
from . import lora, common as options

HELP = "LoRA on prompt/response or chat JSONL, the loss on the assistant's turns"
# Defaults measured to teach a small set of new facts without tuning on
# SmolLM2-135M and Gemma 3 270M (benchmarks/results/defaults_study.md):
# rank 16 on all seven projections, LR 1e-3 after a short warmup, cosine-decayed
# to a tenth, 8 epochs. Rank 8 on q alone (lora's defaults) learned none.
DEFAULT_LR, DEFAULT_CLIP = 1e-3, 1.0
DEFAULT_RANK, DEFAULT_TARGETS, DEFAULT_EPOCHS = 16, "all", 8
DEFAULT_WARMUP, DEFAULT_MIN_LR = 4, 1e-4


def add_options(p) -> None:
    options.add_training_options(p, DEFAULT_LR, DEFAULT_CLIP, corpus=False,
                                 steps_help=options.DATA_STEPS_HELP, warmup=DEFAULT_WARMUP,
                                 min_lr=DEFAULT_MIN_LR)
    lora.add_adapter_options(p, DEFAULT_RANK, DEFAULT_TARGETS)
    options.add_instruct_data_options(
        p, "(default: the 30 made-up facts toy ships; toy-train samples writes them out as facts.jsonl)",
        epochs=DEFAULT_EPOCHS)


def check(args) -> None:
    options.check_instruct_data(args)
    if args.data is None:
        args.data = str(samples.path("facts.jsonl"))


def prepare(args):
    conversations = read_jsonl(args.data)       # bad data fails before the model loads
    recipe, model, config = lora.realize(args)
    source = options.instruct_source(args, model, conversations, config)
    return recipe, source, config, "adapter.gguf"
