"""toy-train: the command-line training loop.

stdout carries only the loss log (format toy/train-v1, one `step N: loss=X`
line per step) or, with --json, one JSON object. Everything else goes to
stderr. Bad input exits 2 with one line naming the problem and the fix; a
failure inside a run exits 1.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

from . import __version__
from ._native import DeviceNotBuilt, ToyError, library
from .config import LlamaConfig, RecipeOptions
from .corpus import BatchSampler, InputError, check_corpus, default_corpus, load_corpus
from .engine import default_threads
from .optim import adamw_hp
from .plot import loss_svg
from .recipes import FromScratch
from .rundir import RunDir

LOG_FORMAT = "toy/train-v1"
RECIPES = ("from-scratch",)

# The from-scratch model's tokens are raw bytes.
BYTE_VOCAB = 256


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line and exit 2."""

    def error(self, message):
        raise InputError(f"{message} (see toy-train --help)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def _nonneg_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def _nonneg_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="toy-train", description="Train a llama-family model; stdout is the loss log.")
    p.add_argument("recipe", nargs="?", default="from-scratch", choices=RECIPES,
                   help="what to train (default: from-scratch on the embedded corpus)")
    p.add_argument("--version", action="version", version=f"toy {__version__}")
    run = p.add_argument_group("run")
    run.add_argument("--steps", type=_positive_int, default=5, help="optimizer steps (default 5)")
    run.add_argument("--seed", type=_nonneg_int, default=0, help="init and data seed (default 0)")
    run.add_argument("--device", default="cpu", choices=("cpu", "cuda", "metal"))
    run.add_argument("--threads", type=_positive_int, default=None,
                     help=f"CPU threads (default {default_threads()} here: min(cores, 8))")
    run.add_argument("--out", default=None, help="run directory (default runs/<run_id>)")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the log")
    data = p.add_argument_group("data")
    data.add_argument("--corpus", default=None,
                      help="text file (byte tokens) or packed int32 tokens (.tok/.bin/.i32); "
                           "default: the embedded corpus")
    data.add_argument("--seq", type=_positive_int, default=64, help="tokens per sequence (default 64)")
    data.add_argument("--batch", type=_positive_int, default=4, help="sequences per step (default 4)")
    opt = p.add_argument_group("optimizer (AdamW)")
    opt.add_argument("--lr", type=_positive_float, default=3e-3, help="peak learning rate (default 3e-3)")
    opt.add_argument("--warmup", type=_nonneg_int, default=0, help="linear warmup steps (default 0)")
    opt.add_argument("--min-lr", type=_nonneg_float, default=None,
                     help="cosine-decay the LR to this by the last step (default: constant LR)")
    opt.add_argument("--weight-decay", type=_nonneg_float, default=0.0)
    opt.add_argument("--beta1", type=_nonneg_float, default=0.9)
    opt.add_argument("--beta2", type=_nonneg_float, default=0.999)
    model = p.add_argument_group("model (from-scratch)")
    model.add_argument("--d-model", type=_positive_int, default=64)
    model.add_argument("--layers", type=_positive_int, default=2)
    model.add_argument("--heads", type=_positive_int, default=4)
    model.add_argument("--kv-heads", type=_positive_int, default=None, help="default: heads / 2, or heads")
    model.add_argument("--d-ff", type=_nonneg_int, default=0, help="default: about 8/3 d-model")
    model.add_argument("--untied", action="store_true", help="separate output projection")
    model.add_argument("--qkv-bias", action="store_true")
    model.add_argument("--init-scale", type=_nonneg_float, default=0.02)
    model.add_argument("--rope-base", type=_positive_float, default=10000.0)
    return p


def learning_rate(step: int, args) -> float:
    """Linear warmup to --lr, then constant or cosine decay to --min-lr."""
    if args.warmup and step <= args.warmup:
        return args.lr * step / args.warmup
    if args.min_lr is None:
        return args.lr
    span = max(args.steps - args.warmup, 1)
    progress = min((step - args.warmup) / span, 1.0)
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * progress))


def _check_args(args) -> None:
    if args.beta1 >= 1 or args.beta2 >= 1:
        raise InputError("--beta1 and --beta2 must be below 1")
    if args.min_lr is not None and args.min_lr > args.lr:
        raise InputError(f"--min-lr ({args.min_lr}) is above --lr ({args.lr})")
    kv_heads = args.kv_heads or (args.heads // 2 if args.heads % 2 == 0 else args.heads)
    if args.d_model % args.heads or (args.d_model // args.heads) % 2:
        raise InputError(f"--d-model ({args.d_model}) must be --heads ({args.heads}) times an "
                         "even head width")
    if args.heads % kv_heads:
        raise InputError(f"--kv-heads ({kv_heads}) must divide --heads ({args.heads})")
    args.kv_heads = kv_heads


def _progress(step: int, steps: int, loss: float, tok_per_s: float) -> None:
    if sys.stderr.isatty():
        end = "\n" if step == steps else ""
        sys.stderr.write(f"\r[{step}/{steps}] loss {loss:.4f}  {tok_per_s:,.0f} tok/s{end}")
        sys.stderr.flush()


def run_from_scratch(args) -> int:
    _check_args(args)
    library(args.device)   # a device that is not built is bad input: exit 2
    if args.corpus is None:
        tokens, corpus_name = default_corpus(), "default"
    else:
        tokens, corpus_name = load_corpus(args.corpus), args.corpus
    vocab = max(BYTE_VOCAB, int(tokens.max()) + 1 if tokens.size else BYTE_VOCAB)
    check_corpus(tokens, args.seq, vocab, corpus_name)

    cfg = LlamaConfig(vocab=vocab, d_model=args.d_model, n_layers=args.layers, n_heads=args.heads,
                      n_kv_heads=args.kv_heads, d_ff=args.d_ff, rope_base=args.rope_base)
    opts = RecipeOptions(t_seq=args.seq, t_batch=args.batch, untied=args.untied,
                         qkv_bias=args.qkv_bias, seed=args.seed, init_scale=args.init_scale)
    recipe = FromScratch(args.device, args.threads)
    try:
        recipe.realize(cfg, opts)
    except ToyError as err:
        if err.status == 1:          # the C core refused the configuration
            raise InputError(str(err)) from None
        raise

    run = RunDir.create(args.out, args.recipe, args.seed)
    config = {
        "format": LOG_FORMAT, "recipe": args.recipe, "run_id": run.run_id, "toy_version": __version__,
        "device": args.device, "threads": recipe.engine.threads, "corpus": corpus_name,
        "corpus_tokens": int(tokens.size), "model": cfg.to_dict(), "options": opts.to_dict(),
        "steps": args.steps, "lr": args.lr, "warmup": args.warmup, "min_lr": args.min_lr,
        "weight_decay": args.weight_decay, "beta1": args.beta1, "beta2": args.beta2,
    }
    run.write_json("config.json", config)

    sampler = BatchSampler(tokens, args.seq, args.batch, args.seed)
    tokens_per_step = args.seq * args.batch
    losses: list[float] = []
    started = time.perf_counter()
    try:
        for step in range(1, args.steps + 1):
            lr = learning_rate(step, args)
            hp = adamw_hp(step, lr, args.beta1, args.beta2, 1e-8, args.weight_decay)
            seq_ids, positions, labels = sampler.next()
            t0 = time.perf_counter()
            loss = recipe.step(seq_ids, positions, labels, hp, is_first=(step == 1))
            seconds = time.perf_counter() - t0
            losses.append(loss)
            if not args.json:
                sys.stdout.write(f"step {step}: loss={loss:.6f}\n")
                sys.stdout.flush()
            run.event(step=step, loss=loss, lr=lr, tokens=tokens_per_step, seconds=round(seconds, 6))
            _progress(step, args.steps, loss, tokens_per_step / max(seconds, 1e-9))
        elapsed = time.perf_counter() - started
        model_path = run.path / "model.gguf"
        recipe.save(model_path)
        run.write_text("loss.svg", loss_svg(losses, f"{args.recipe}: training loss"))
    finally:
        run.close()

    tok_per_s = tokens_per_step * args.steps / max(elapsed, 1e-9)
    if args.json:
        print(json.dumps({
            "format": LOG_FORMAT, "run_id": run.run_id, "run_dir": str(run.path),
            "recipe": args.recipe, "steps": args.steps, "losses": losses,
            "final_loss": losses[-1], "tokens_per_second": tok_per_s, "model": str(model_path),
        }))
    print(f"toy-train: {args.steps} steps, {tok_per_s:,.0f} tokens/s, wrote {run.path}",
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return run_from_scratch(args)
    except (InputError, DeviceNotBuilt) as err:
        print(f"toy-train: error: {err}", file=sys.stderr)
        return 2
    except ToyError as err:
        print(f"toy-train: failed: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("toy-train: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
