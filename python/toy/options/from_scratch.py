"""toy-train from-scratch: a new llama (or, with --arch gpt2, GPT-2) model
from seeded random init on a token corpus (raw bytes for text)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.config import ARCHITECTURES
from ..core.errors import InputError
from ..datasets.batches import CorpusSource
from ..datasets.corpus import check_corpus, default_corpus, load_corpus, token_range
from ..recipes import FromScratch
from . import common as options

HELP = "train a new llama or GPT-2 model from random init (the default)"


@dataclass(kw_only=True, frozen=True)
class FromScratchOptions(options.ShapeOptions):
    recipe: str = "from-scratch"
    lr: float = 3e-3
    clip_norm: float = 0.0
    arch: str = "llama"


# The from-scratch model's tokens are raw bytes.
BYTE_VOCAB = 256


# llama-only shape options and the values that mean "not given"
LLAMA_ONLY = {"kv_heads": None, "untied": False, "qkv_bias": False, "rope_base": 10000.0}


def add_options(p) -> None:
    defaults = FromScratchOptions()
    options.add_training_options(p, defaults)
    options.add_init_scale(p, defaults)
    p.add_argument(
        "--arch",
        choices=ARCHITECTURES,
        default=defaults.arch,
        help="llama (RMSNorm, SwiGLU, RoPE; default) or gpt2 (LayerNorm, GELU MLP, learned "
        "positions, biases, tied head; --d-ff defaults to 4 d-model)",
    )
    options.add_shape_options(p, defaults)


def check(args: FromScratchOptions) -> None:
    if args.arch == "llama":
        options.check_shape(args)
        return
    for dest, unset in LLAMA_ONLY.items():
        if getattr(args, dest) != unset:
            raise InputError(
                f"--{dest.replace('_', '-')} is a llama option; --arch gpt2 has "
                "full multi-head attention, learned positions, q/k/v biases and a tied head"
            )
    options.check_head_width(args)


def prepare(args: FromScratchOptions) -> options.Prepared:
    if args.corpus is None:
        tokens, corpus_name = default_corpus(), "default"
    else:
        tokens, corpus_name = load_corpus(args.corpus), args.corpus
    vocab = max(BYTE_VOCAB, token_range(tokens)[1] + 1)
    check_corpus(tokens, args.seq, vocab, corpus_name)
    cfg = args.model_config(vocab, arch=args.arch)
    opts = options.recipe_options(args, evaluates=False)
    recipe = FromScratch(args.device, args.threads)
    options.realize_or_input_error(recipe.realize, cfg, opts)
    config = {"model": cfg.to_dict(), "options": opts.to_dict()}
    chosen = {"kv_heads": options.resolved_kv_heads(args)} if args.arch == "llama" else {}
    return options.Prepared(recipe, CorpusSource(tokens, corpus_name, args), config, "model.gguf", chosen)


COMMAND = options.RecipeCommand(HELP, FromScratchOptions, add_options, check, prepare)
