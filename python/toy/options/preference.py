"""toy-train dpo and orpo: LoRA on a GGUF trained on preference pairs
(toy.datasets.preference), the loss one of tinynn's preference objectives:
dpo, direct preference optimisation, the frozen base as its own reference;
orpo, odds-ratio preference optimisation, the chosen answers' cross-entropy
plus an odds-ratio term, no reference.

Shared defaults: rank 16 on all seven projections (instruct's, measured to
teach SmolLM2-135M), 2 pairs a micro-batch, --seq just long enough for the
longest pair (at most 512: no step computes padding it need not), beta 0.1
(TRL's default for both), 4 warmup
steps and cosine decay to a tenth of the LR. Each recipe gives its LR and
epochs: measured on the sample pairs (docs/preference.md), DPO
collapses into repeating the preferred opening when trained as long and as
fast as ORPO, whose cross-entropy term keeps the answers whole."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

from ..core import bounds
from ..core.errors import InputError
from ..core.launcher import launched_ranks
from ..datasets import samples
from ..datasets.batches import PreferenceSource
from ..datasets.preference import PREFERENCE_NAMES, fit_pairs, read_pairs, tokenize_pairs
from ..datasets.records import parse_columns
from ..native.session import ALL_TARGETS
from ..recipes import DPO, ORPO
from ..text.chat import ChatFormatter
from ..text.tokenizer import GGUFTokenizer
from . import common as options
from . import lora

MAX_PAIRS = 128  # tinynn: a preference batch holds at most 256 rows


@dataclass(kw_only=True, frozen=True)
class PreferenceOptions(options.AdapterOptions, options.DataOptions):
    """What dpo and orpo share."""

    seq: int | None = None  # None: the longest pair's, rounded up to 16, at most 512
    batch: int = 2  # pairs
    clip_norm: float = 1.0
    warmup: int = 4
    rank: int = 16
    targets: str = ALL_TARGETS  # every projection the model has
    beta: float = 0.1


# LR and epochs measured on the sample pairs (docs/preference.md)
@dataclass(kw_only=True, frozen=True)
class DPOOptions(PreferenceOptions):
    recipe: str = "dpo"
    lr: float = 2e-4
    min_lr: float | None = 2e-4 / 10
    epochs: int = 1


@dataclass(kw_only=True, frozen=True)
class ORPOOptions(PreferenceOptions):
    recipe: str = "orpo"
    lr: float = 5e-4
    min_lr: float | None = 5e-4 / 10
    epochs: int = 3


BETA_HELP = {
    "dpo": "DPO's beta: how far the tuned model may move from the base (the scale of the implicit reward)",
    "orpo": "ORPO's lambda (TRL's beta): the weight of the odds-ratio term beside the chosen answers' cross-entropy",
}


def add_options(p, defaults: PreferenceOptions) -> None:
    options.add_training_options(
        p,
        defaults,
        steps_help=options.DATA_STEPS_HELP,
        batch_help="pairs per micro-batch (two rows each: the chosen and the rejected answer)",
    )
    lora.add_adapter_options(p, defaults)
    pref = p.add_argument_group("preference data")
    pref.add_argument(
        "--data",
        default=defaults.data,
        help="JSON Lines, a JSON array, Parquet or Arrow of {prompt, chosen, rejected} records, as strings "
        "or lists of {role, content} messages (TRL's layouts); only the answers' tokens count "
        "(default: the 40 sample pairs toy ships; toy-train samples writes them "
        "out as preferences.jsonl)",
    )
    options.add_columns_option(pref, defaults, "chosen=good,rejected=bad")
    pref.add_argument(
        "--epochs",
        "--num-train-epochs",
        type=bounds.option("epochs"),
        default=defaults.epochs,
        help="passes over the pairs",
    )
    pref.add_argument(
        "--eval-split",
        type=bounds.option("eval-split"),
        default=defaults.eval_split,
        help="held-out fraction of the pairs, by --seed; its loss, reward margin and accuracy are reported at the end",
    )
    options.add_packing_option(
        pref,
        defaults,
        "lay several pairs in each row of --seq tokens, each answer attending only to itself "
        "(positions restart per answer), so a step computes no padding; the same per-pair losses. "
        "on cuts a pair too long for one row; auto (default): on where no pair is cut and it saves "
        "at least a quarter of the rows",
    )
    pref.add_argument("--beta", type=bounds.option("beta"), default=defaults.beta, help=BETA_HELP[defaults.recipe])


def check(args: PreferenceOptions) -> None:
    options.check_instruct_data(args)
    if args.batch > MAX_PAIRS:
        raise InputError(f"--batch {args.batch}: a preference micro-batch holds at most {MAX_PAIRS} pairs")
    if launched_ranks() > 1:
        raise InputError(f"{args.recipe} does not run data-parallel yet: run it as one process")


MAX_DEFAULT_SEQ = 512


def data_file(args: PreferenceOptions) -> str:
    """--data, or the 40 answer pairs toy ships."""
    return args.data or str(samples.path("preferences.jsonl"))


def prepare(given: PreferenceOptions) -> options.Prepared:
    chosen: dict = {"data": data_file(given)}
    pairs = read_pairs(
        chosen["data"], parse_columns(given.columns, PREFERENCE_NAMES)
    )  # bad data fails before the model loads
    model = options.base_model(given)
    tokenizer = GGUFTokenizer.from_gguf(model)
    tokenized = tokenize_pairs(pairs, ChatFormatter.from_gguf(model, tokenizer))
    if given.seq is None:
        chosen["seq"] = default_seq(tokenized)
    args = replace(given, **chosen)
    recipe_class = DPO if args.recipe == "dpo" else ORPO
    pad_id = tokenizer.eos_id if tokenizer.eos_id is not None else 0
    # before the recipe is realized: whether the rows are packed shapes the step
    packing = options.packing_for(args, model)
    source = PreferenceSource(
        fit_pairs(tokenized, args.seq),
        args.data,
        replace(args, packing=packing),
        pad_id,
        needs_reference=args.recipe == "dpo",
    )
    recipe, model, config = lora.realize(args, recipe_class, rows=source.t_batch, packed=source.packed, beta=args.beta)
    config.update(
        objective=recipe.objective,
        beta=args.beta,
        data=args.data,
        epochs=args.epochs,
        eval_split=args.eval_split,
        packing=args.packing,
        packed_rows=len(source.layout["train"]) if source.packed else None,
        train_pairs=len(source.train),
        eval_pairs=len(source.eval),
    )
    print(
        f"toy-train: {len(source.train)} pairs to train on, {len(source.eval)} held out, --seq {args.seq}; "
        f"{source.describe_packing()}",
        file=sys.stderr,
    )
    return lora.prepared(recipe, source, config, chosen)


def default_seq(pairs) -> int:
    """--seq when not given: the longest answer with its prompt (a row's inputs
    are its tokens but the last), rounded up to a multiple of 16, at most 512."""
    longest = max(len(s.tokens) - 1 for pair in pairs for s in (pair.chosen, pair.rejected))
    return min(-(-longest // 16) * 16, MAX_DEFAULT_SEQ)


DPO_COMMAND = options.RecipeCommand(
    "preference-tune LoRA adapters with DPO (pairs of answers, the base as reference)",
    DPOOptions,
    lambda p: add_options(p, DPOOptions()),
    check,
    prepare,
)
ORPO_COMMAND = options.RecipeCommand(
    "preference-tune LoRA adapters with ORPO (pairs of answers, no reference model)",
    ORPOOptions,
    lambda p: add_options(p, ORPOOptions()),
    check,
    prepare,
)
