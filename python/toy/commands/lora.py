"""toy-train lora: low-rank adapters trained on a frozen GGUF, kept in its
stored (quantized) types, on a text or token corpus."""
from __future__ import annotations

from ..batches import CorpusSource
from ..config import RecipeOptions
from ..corpus import check_corpus
from ..merge import DTYPES
from ..recipes import LoRA
from .. import bounds
from . import options

HELP = "train LoRA adapters on a GGUF model you already run (quantized)"
DEFAULT_LR, DEFAULT_CLIP = 1e-3, 0.0


def add_adapter_options(p) -> None:
    options.add_init_scale(p)
    lora = p.add_argument_group("lora")
    options.add_model_option(lora)
    lora.add_argument("--rank", type=bounds.option("rank"), default=8, help="adapter rank (default 8)")
    lora.add_argument("--alpha", type=bounds.option("alpha"), default=None,
                      help="scale numerator (default 2*rank)")
    lora.add_argument("--targets", default="q",
                      help="comma-separated projections to adapt: q,k,v,o,gate,up,down (default q)")
    lora.add_argument("--merge", choices=DTYPES, default=None,
                      help="also write merged.gguf: base + adapter in f32, f16 or the base's type")
    lora.add_argument("--base-compute", choices=("fast", "stored"), default="fast",
                      help="fast (default): train through transposed Q8_0 copies of the base's "
                           "matrices; stored: the stored types only (least memory, about half the speed)")


def add_options(p) -> None:
    options.add_training_options(p, DEFAULT_LR, DEFAULT_CLIP)
    add_adapter_options(p)


def check(args) -> None:
    pass


def realize(args):
    """The LoRA recipe on --model, its base's path and the config it records."""
    model = options.base_model(args)
    targets = tuple(t.strip() for t in args.targets.split(",") if t.strip())
    opts = RecipeOptions(t_seq=args.seq, t_batch=args.batch, seed=args.seed,
                         init_scale=args.init_scale, clip_norm=args.clip_norm,
                         precision=getattr(args, "precision", "f32"))
    recipe = LoRA(args.device, args.threads)
    options.realize_or_input_error(recipe.realize, model, None, args.rank, opts, alpha=args.alpha,
                                   targets=targets, base_compute=args.base_compute)
    config = {"model": recipe.cfg.to_dict(), "options": opts.to_dict(), "base": str(model),
              "lora": {"rank": recipe.rank, "alpha": recipe.alpha, "targets": list(recipe.targets),
                       "base_compute": recipe.base_compute}}
    return recipe, model, config


def prepare(args):
    recipe, model, config = realize(args)
    tokens, corpus_name = options.gguf_corpus(args, model)
    check_corpus(tokens, args.seq, recipe.cfg.vocab, corpus_name)
    return recipe, CorpusSource(tokens, corpus_name, args), config, "adapter.gguf"
