"""What toy-train dpo and orpo share: LoRA on a GGUF trained on preference
pairs (toy.datasets.preference), the loss one of tinynn's preference objectives.

Shared defaults: rank 16 on all seven projections (instruct's, measured to
teach SmolLM2-135M), 2 pairs a micro-batch, --seq just long enough for the
longest pair (at most 512: no step computes padding it need not), beta 0.1
(TRL's default for both), 4 warmup
steps and cosine decay to a tenth of the LR. Each recipe gives its LR and
epochs: measured on the sample pairs (README, "Preference tuning"), DPO
collapses into repeating the preferred opening when trained as long and as
fast as ORPO, whose cross-entropy term keeps the answers whole."""
from __future__ import annotations

import sys

from ..core import bounds
from ..datasets import samples
from ..datasets.batches import PreferenceSource
from ..core.errors import InputError
from ..core.launcher import launched_ranks
from ..text.chat import ChatFormatter
from ..datasets.preference import fit_pairs, read_pairs, tokenize_pairs
from ..text.tokenizer import GGUFTokenizer
from . import lora, common as options

DEFAULT_CLIP, DEFAULT_BETA, DEFAULT_RANK, DEFAULT_TARGETS, DEFAULT_WARMUP = 1.0, 0.1, 16, "all", 4
MAX_PAIRS = 128          # tinynn: a preference batch holds at most 256 rows


def add_options(p, beta_help: str, lr: float, epochs: int) -> None:
    options.add_training_options(p, lr, DEFAULT_CLIP, corpus=False,
                                 steps_help=options.DATA_STEPS_HELP, warmup=DEFAULT_WARMUP,
                                 min_lr=lr / 10,
                                 data_shape=dict(seq=None, batch=2, batch_help="pairs per micro-batch "
                                                 "(two rows each: the chosen and the rejected answer)"))
    lora.add_adapter_options(p, DEFAULT_RANK, DEFAULT_TARGETS)
    pref = p.add_argument_group("preference data")
    pref.add_argument("--data", default=None,
                      help="JSONL of {prompt, chosen, rejected} lines, as strings or lists of "
                           "{role, content} messages (TRL's layouts); only the answers' tokens count "
                           "(default: the 40 sample pairs toy ships; toy-train samples writes them "
                           "out as preferences.jsonl)")
    pref.add_argument("--epochs", "--num-train-epochs", type=bounds.option("epochs"), default=epochs,
                      help="passes over the pairs")
    pref.add_argument("--eval-split", type=bounds.option("eval-split"), default=0.1,
                      help="held-out fraction of the pairs, by --seed; its loss, reward margin and "
                           "accuracy are reported at the end")
    pref.add_argument("--beta", type=bounds.option("beta"), default=DEFAULT_BETA, help=beta_help)


def check(args) -> None:
    options.check_instruct_data(args)
    if args.batch > MAX_PAIRS:
        raise InputError(f"--batch {args.batch}: a preference micro-batch holds at most {MAX_PAIRS} pairs")
    if launched_ranks() > 1:
        raise InputError(f"{args.recipe} does not run data-parallel yet: run it as one process")
    if args.data is None:
        args.data = str(samples.path("preferences.jsonl"))


MAX_DEFAULT_SEQ = 512


def prepare(args, recipe_class):
    pairs = read_pairs(args.data)        # bad data fails before the model loads
    model = options.base_model(args)
    tokenizer = GGUFTokenizer.from_gguf(model)
    tokenized = tokenize_pairs(pairs, ChatFormatter.from_gguf(model, tokenizer))
    if args.seq is None:
        args.seq = default_seq(tokenized)
    recipe, model, config = lora.realize(args, recipe_class, rows=2 * args.batch, beta=args.beta)
    fitted = fit_pairs(tokenized, args.seq)
    pad_id = tokenizer.eos_id if tokenizer.eos_id is not None else 0
    source = PreferenceSource(fitted, args.data, args, pad_id, needs_reference=recipe.objective == "dpo")
    config.update(objective=recipe.objective, beta=args.beta, data=args.data, epochs=args.epochs,
                  eval_split=args.eval_split, train_pairs=len(source.train), eval_pairs=len(source.eval))
    print(f"toy-train: {len(source.train)} pairs to train on, {len(source.eval)} held out, "
          f"--seq {args.seq}", file=sys.stderr)
    return recipe, source, config, "adapter.gguf"


def default_seq(pairs) -> int:
    """--seq when not given: the longest answer with its prompt (a row's inputs
    are its tokens but the last), rounded up to a multiple of 16, at most 512."""
    longest = max(len(s.tokens) - 1 for pair in pairs for s in (pair.chosen, pair.rejected))
    return min(-(-longest // 16) * 16, MAX_DEFAULT_SEQ)
