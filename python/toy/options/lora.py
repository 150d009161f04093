"""toy-train lora: low-rank adapters trained on a frozen GGUF, kept in its
stored (quantized) types, on a text or token corpus."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ..core import bounds
from ..datasets.batches import CorpusSource
from ..datasets.corpus import check_corpus
from ..formats.merge import DTYPES
from ..native.session import ALL_TARGETS as LORA_ALL
from ..recipes import LoRA
from . import common as options

HELP = "train LoRA adapters on a GGUF model you already run (quantized)"


@dataclass(kw_only=True, frozen=True)
class LoRAOptions(options.AdapterOptions):
    recipe: str = "lora"
    corpus: str | None = None  # None: the embedded corpus, through the model's tokenizer
    lr: float = 1e-3
    clip_norm: float = 0.0


def add_adapter_options(p, defaults: options.AdapterOptions) -> None:
    """The adapter's options, with the recipe's own defaults."""
    options.add_init_scale(p, defaults)
    lora = p.add_argument_group("lora")
    options.add_model_option(lora, defaults)
    lora.add_argument("--rank", "--lora-r", type=bounds.option("rank"), default=defaults.rank, help="adapter rank")
    lora.add_argument(
        "--alpha",
        "--lora-alpha",
        type=bounds.option("alpha"),
        default=defaults.alpha,
        help="scale numerator (default 2*rank)",
    )
    lora.add_argument(
        "--targets",
        "--target-modules",
        type=targets_option,
        default=defaults.targets,
        help="comma-separated projections to adapt: q,k,v,o,gate,up,down (attention layers), "
        "conv_in,conv_out (LFM2's short convolutions), ssm_qkv,ssm_gate,ssm_out (Qwen 3.5's "
        "delta-net layers), ssm_in,ssm_out (Granite 4's Mamba-2 layers), gate_exps,up_exps,down_exps "
        "or experts (a mixture's experts, a pair per expert), gate_shexp,up_shexp,down_shexp (its "
        "shared expert), or all (every one the model has but the experts); "
        "PEFT's names (q_proj, ..., all-linear) and llama.cpp's (ffn_gate_exps, ...) too",
    )
    lora.add_argument(
        "--merge",
        choices=DTYPES,
        default=defaults.merge,
        help="also write merged.gguf: base + adapter in f32, f16 or the base's type",
    )
    lora.add_argument(
        "--base-compute",
        choices=("auto", "fast", "stored", "bf16", "bf16_head"),
        default=defaults.base_compute,
        help="fast: train through transposed Q8_0 copies of the base's matrices; stored: "
        "the stored types only (least memory; near fast's speed on K-quant bases, slower on Q4_0/Q4_1/Q8_0); "
        "bf16 (with --precision "
        "bf16): one bfloat16 copy, multiplied on the CPU's bfloat16 products (fast's choice "
        "under --precision bf16 on an AMX CPU); bf16_head (with --precision bf16): fast's copies, "
        "the output head's in bfloat16 (fast's choice under --precision bf16 on AVX512-BF16 "
        "without AMX, as AMD Zen 4); auto (default): fast where the step fits in "
        "memory with the copies, else stored",
    )


# PEFT's module names (llama, Qwen, Gemma) and llama.cpp's expert names -> toy's targets
PEFT_NAMES = {
    "q_proj": "q",
    "k_proj": "k",
    "v_proj": "v",
    "o_proj": "o",
    "gate_proj": "gate",
    "up_proj": "up",
    "down_proj": "down",
    # llama.cpp's tensor names of a mixture's experts
    "ffn_gate_exps": "gate_exps",
    "ffn_up_exps": "up_exps",
    "ffn_down_exps": "down_exps",
}
ALL_TARGETS = ("all", "all-linear")  # each: LORA_ALL, every projection the model has


def targets_option(text: str) -> str:
    """--targets as toy's comma-separated names: PEFT's q_proj ... down_proj
    and all-linear (or all: every projection the model has) translated; other names
    are left for the recipe to refuse with the list of targets."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if any(name in ALL_TARGETS for name in names):
        return LORA_ALL
    return ",".join(PEFT_NAMES.get(name, name) for name in names)


def add_options(p) -> None:
    defaults = LoRAOptions()
    options.add_training_options(p, defaults)
    add_adapter_options(p, defaults)


def check(args: LoRAOptions) -> None:
    pass


def realize(
    args: options.AdapterOptions, recipe_class=LoRA, rows: int | None = None, packed: bool = False, **recipe_options
):
    """The LoRA recipe (or a subclass: DPO, ORPO) on --model, its base's path
    and the config it records. rows: sequences per micro-batch (default --batch);
    packed: each row may hold several samples (instruct's packing)."""
    model = options.base_model(args)
    targets = tuple(t.strip() for t in args.targets.split(",") if t.strip())
    # instruct evaluates when it holds data out, DPO and ORPO always (the reference)
    evaluates = recipe_class is not LoRA or getattr(args, "eval_split", 0) > 0
    opts = options.recipe_options(args, evaluates, t_batch=rows or args.batch, packed=packed)
    recipe = recipe_class(args.device, args.threads)
    options.realize_or_input_error(
        recipe.realize,
        model,
        None,
        args.rank,
        opts,
        alpha=args.alpha,
        targets=targets,
        base_compute=args.base_compute,
        **recipe_options,
    )
    if args.base_compute == "auto" and recipe.base_compute == "stored":
        print(
            "toy-train: --base-compute auto: training on the stored base, as the fast copies of it would not fit",
            file=sys.stderr,
        )
    config = {
        "model": recipe.cfg.to_dict(),
        "options": opts.to_dict(),
        "base": str(model),
        "lora": {
            "rank": recipe.rank,
            "alpha": recipe.alpha,
            "targets": list(recipe.targets),
            "base_compute": recipe.base_compute,
        },
    }
    return recipe, model, config


def prepared(recipe, source, config: dict, chosen: dict | None = None) -> options.Prepared:
    """An adapter recipe's Prepared: its adapter file, and the base's computation
    as chosen (a checkpoint resumes as the run computed, whatever memory is free then)."""
    chosen = {**(chosen or {}), "base_compute": recipe.base_compute}
    return options.Prepared(recipe, source, config, "adapter.gguf", chosen)


def prepare(args: LoRAOptions) -> options.Prepared:
    recipe, model, config = realize(args)
    # tokenizing checks its own working memory against what is free now; what it
    # leaves in the process joins the plan (MemoryPlan.count_loaded_since_build)
    tokens, corpus_name = options.gguf_corpus(args, model)
    check_corpus(tokens, args.seq, recipe.cfg.vocab, corpus_name)
    return prepared(recipe, CorpusSource(tokens, corpus_name, args), config)


COMMAND = options.RecipeCommand(HELP, LoRAOptions, add_options, check, prepare)
