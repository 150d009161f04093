"""toy-train instruct: LoRA on a chat GGUF over JSONL conversations, the
loss on the assistant's turns."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..datasets import samples
from ..datasets.instruct import INSTRUCT_NAMES, read_jsonl
from ..datasets.records import parse_columns
from ..native.session import ALL_TARGETS
from . import common as options
from . import lora

HELP = "LoRA on prompt/response or chat JSONL, the loss on the assistant's turns"


# Defaults measured to teach a user's made-up facts without tuning on
# SmolLM2-135M and Gemma 3 270M (benchmarks/defaults_study.py; the sets that
# chose them and the held-out sets that test them: docs/instruct.md, "Defaults
# that work"): rank 16 on all seven projections, LR 1e-3 after a short warmup,
# cosine-decayed to a tenth. Three follow the data (None here; chosen by
# data_defaults and epoch_defaults, printed with the reason at the start of
# the run):
@dataclass(kw_only=True, frozen=True)
class InstructOptions(options.AdapterOptions, options.DataOptions):
    recipe: str = "instruct"
    lr: float = 1e-3
    clip_norm: float = 1.0
    rank: int = 16
    targets: str = ALL_TARGETS  # every projection the model has
    epochs: int | None = None  # None: EPOCHS, more where that is under MIN_STEPS steps
    warmup: int = 4
    min_lr: float | None = 1e-4
    batch: int | None = None  # None: BATCH, SMALL_BATCH below SMALL_SET samples
    eval_split: float | None = None  # None: none below EVAL_SPLIT_FROM samples, else EVAL_SPLIT


# A set of a few dozen facts at batch 4 is 8 steps an epoch: 64 steps learned
# the facts as asked but answered half when asked in other words, and twice
# the steps at batch 2 answered most of them (the first study's choosing
# sets); 120 facts at batch 2 answered 0.70 / 0.67 in the other wordings,
# 0.70 / 0.60 at batch 4 with as many epochs (the third study's).
BATCH, SMALL_BATCH, SMALL_SET = 4, 2, 200
# Each fact seen 16 times: at 8 epochs SmolLM2 answered 60 places asked in
# other words 0.60 of the time, and 0.98 at 16 (the third study's choosing
# sets). And at least 240 steps: 16 epochs of a set packed two facts a row
# are few (Gemma 3), and under 240 SmolLM2 learned under half of the facts
# told three to an answer (the second study's).
EPOCHS, MIN_STEPS = 16, 240
# A held-out sample is one the adapter never learns: in a set of 30 facts,
# 3 facts lost to tell a perplexity of 27 others.
EVAL_SPLIT, EVAL_SPLIT_FROM = 0.1, 200


def data_defaults(args: InstructOptions, samples: int) -> tuple[dict, list[str]]:
    """The options the data decides (those left None), by name, and why, one
    phrase each, e.g. ["batch 2 (under 200 samples: twice the steps an epoch)"]."""
    chosen: dict = {}
    said = []
    if args.batch is None:
        small = samples < SMALL_SET
        chosen["batch"] = SMALL_BATCH if small else BATCH
        if small:
            said.append(f"batch {chosen['batch']} (under {SMALL_SET} samples: twice the steps an epoch)")
    if args.eval_split is None:
        chosen["eval_split"] = EVAL_SPLIT if samples >= EVAL_SPLIT_FROM else 0.0
        if chosen["eval_split"] == 0:
            said.append(f"no eval split (under {EVAL_SPLIT_FROM} samples: each held out is one never learned)")
    return chosen, said


def epoch_defaults(args: InstructOptions, source) -> list[str]:
    """The source's epochs where --epochs is left None, from the rows' steps
    an epoch (known once the rows are packed), and why where they are not EPOCHS."""
    if args.epochs is not None:
        return []
    epochs = max(EPOCHS, math.ceil(MIN_STEPS / source.steps_per_epoch))
    source.set_epochs(epochs)
    if epochs == EPOCHS or args.steps:
        return []
    return [f"{epochs} epochs ({EPOCHS} would be {EPOCHS * source.steps_per_epoch} steps: at least {MIN_STEPS})"]


def add_options(p) -> None:
    defaults = InstructOptions()
    options.add_training_options(
        p,
        defaults,
        steps_help=options.DATA_STEPS_HELP,
        batch_help=f"sequences per micro-batch (default {BATCH}; {SMALL_BATCH} for a set under {SMALL_SET} samples)",
    )
    lora.add_adapter_options(p, defaults)
    options.add_instruct_data_options(
        p,
        defaults,
        "(default: the 30 made-up facts toy ships; toy-train samples writes them out as facts.jsonl)",
        eval_split_help=f"none under {EVAL_SPLIT_FROM} samples, {EVAL_SPLIT} from {EVAL_SPLIT_FROM}",
        epochs_help=f"{EPOCHS}, more where that is under {MIN_STEPS} steps",
    )


def check(args: InstructOptions) -> None:
    options.check_instruct_data(args)


def data_file(args: InstructOptions) -> str:
    """--data, or the 30 made-up facts toy ships."""
    return args.data or str(samples.path("facts.jsonl"))


def prepare(given: InstructOptions) -> options.Prepared:
    chosen: dict = {"data": data_file(given)}
    conversations = read_jsonl(
        chosen["data"], parse_columns(given.columns, INSTRUCT_NAMES)
    )  # bad data fails before the model loads
    from_data, said = data_defaults(given, len(conversations))
    chosen.update(from_data)
    args = replace(given, **chosen)

    def say_chosen(source) -> str:
        phrases = said + epoch_defaults(args, source)
        return f"{len(conversations)} samples: " + "; ".join(phrases) if phrases else ""

    source = options.instruct_source(args, options.base_model(args), conversations, say_chosen)
    chosen["epochs"] = source.epochs
    recipe, _, config = lora.realize(args, packed=source.packed)
    options.record_instruct_data(args, source, config)
    return lora.prepared(recipe, source, config, chosen)


COMMAND = options.RecipeCommand(HELP, InstructOptions, add_options, check, prepare)
