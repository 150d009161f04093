"""From the parsed arguments to a realized recipe and its data source, one
function per recipe: what toy-train runs, before its first step."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ._native import ToyError
from .batches import CorpusSource, InstructSource
from .config import LlamaConfig, RecipeOptions
from .corpus import TOKEN_SUFFIXES, InputError, check_corpus, default_corpus, load_corpus
from .instruct import ChatFormatter, read_jsonl
from .models import default_model_path
from .recipes import FromScratch, FullFineTune, LoRA, WarmStart
from .recipes.full import training_bytes
from .engine import read_gguf_config
from .merge import check_requantizable
from .tokenizer import GGUFTokenizer

# The from-scratch model's tokens are raw bytes.
BYTE_VOCAB = 256


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


def _base_model(args) -> Path:
    model = Path(args.model) if args.model else default_model_path()
    if not model.is_file():
        raise InputError(f"model file not found: {model} (give an existing --model PATH)")
    return model


def _realize_lora(args):
    model = _base_model(args)
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
    source = _instruct_source(args, model, conversations, config)
    return recipe, source, config, "adapter.gguf"


def _instruct_source(args, model, conversations, config) -> InstructSource:
    """Conversations rendered with the model's chat template; config gains the data's figures."""
    tokenizer = GGUFTokenizer.from_gguf(model)
    formatter = ChatFormatter.from_gguf(model, tokenizer)
    samples = [formatter.sample(messages) for messages in conversations]
    pad_id = tokenizer.eos_id if tokenizer.eos_id is not None else 0
    source = InstructSource(samples, args.data, args, pad_id)
    config.update(data=args.data, epochs=args.epochs, eval_split=args.eval_split,
                  train_samples=len(source.train), eval_samples=len(source.eval))
    return source


def _available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux); None where there is none."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def prepare_full(args):
    conversations = read_jsonl(args.data) if args.data is not None else None
    model = _base_model(args)
    opts = RecipeOptions(t_seq=args.seq, t_batch=args.batch, seed=args.seed, clip_norm=args.clip_norm)
    try:
        cfg = read_gguf_config(model)
    except ToyError as err:
        raise InputError(str(err)) from None
    opts.untied = cfg.untied
    if args.save_type == "base":
        check_requantizable(model)
    need, available = training_bytes(cfg, opts), _available_bytes()
    print(f"toy-train: full fine-tuning {model.name} needs about {need / 2**20:,.0f} MB (weights, "
          f"gradients, AdamW moments, activations)"
          + (f"; {available / 2**20:,.0f} MB available" if available else ""), file=sys.stderr)
    if available is not None and need > available:
        raise InputError(f"full fine-tuning {model} needs about {need / 2**20:,.0f} MB and "
                         f"{available / 2**20:,.0f} MB is available: use a smaller --seq/--batch, "
                         "or train LoRA adapters (toy-train lora)")
    recipe = FullFineTune(args.device, args.threads)
    _realize(recipe.realize, model, opts)
    recipe.save_dtype = args.save_type
    config = {"model": recipe.cfg.to_dict(), "options": opts.to_dict(), "base": str(model),
              "save_type": args.save_type}
    if conversations is not None:
        source = _instruct_source(args, model, conversations, config)
    else:
        tokens, corpus_name = _donor_corpus(args, model)
        check_corpus(tokens, args.seq, recipe.cfg.vocab, corpus_name)
        source = CorpusSource(tokens, corpus_name, args)
    return recipe, source, config, "model.gguf"


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
           "instruct": prepare_instruct, "full": prepare_full}


def prepare(args):
    """(recipe, source, recipe_config, weights_name) for args.recipe."""
    return PREPARE[args.recipe](args)
