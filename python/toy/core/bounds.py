"""The range of every number a user gives toy, in one table.

Each entry is an option of toy-train or toy-generate (by its flag's name)
and, where the number reaches the C core, the Python fields that carry it
(ModelConfig, RecipeOptions, ...). The ranges are those the C core accepts
(tinynn's checks in llama.c, vit.c, session.c, generate.c: a value past them
is refused there, or would not fit its int32_t or float at all) or, where
the core has no limit, what keeps the arithmetic finite. The argparse types,
the options' help and the Python API's checks are all made from this table,
so a command line and a Python call refuse the same values with the same
words: one line for any text past the range -- 2**64, 1e309, nan, inf --
never an OverflowError (tests/test_option_bounds.py tries every option).

Memory is the other bound: a configuration within these ranges can still
need more than the machine has; toy.core.plan estimates it and toy.core.machine
refuses it before anything is allocated.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from .errors import TNN_ERR_ARG, ToyError

INT32_MAX = 2**31 - 1
UINT64_MAX = 2**64 - 1
FLOAT32_MAX = 3.4028234663852886e38  # a number the C core takes as a float: past this it would be inf
TOKENS_PER_STEP = 1 << 20  # tinynn: t_seq * t_batch, and the longest KV cache


@dataclass(frozen=True)
class Bound:
    name: str  # the option's flag without "--"
    kind: type  # int or float
    low: float
    high: float  # math.inf: any finite value
    low_open: bool = False  # low itself excluded
    high_open: bool = False
    fields: tuple = ()  # the Python fields (dataclass attributes, arguments) it bounds
    # words the option takes besides a number (--recompute auto); an option
    # with words keeps its value as text: the word, or the number written out
    words: tuple = ()

    def describe(self) -> str:
        """'from 1 to 65,536', '> 0', 'from 0 to below 1', 'auto, off, or from 1 to 9' ..."""
        return f"{', '.join(self.words)}, or {self._span()}" if self.words else self._span()

    def expected(self) -> str:
        """What a value must be, as a refusal says it: 'a whole number from 1 to 9' ..."""
        number = f"{'a whole number' if self.kind is int else 'a number'} {self._span()}"
        return f"{', '.join(self.words)}, or {number}" if self.words else number

    def _span(self) -> str:
        if self.high in (math.inf, FLOAT32_MAX):
            above = f"{'>' if self.low_open else '>='} {self.low:g}"
            return above if self.high == math.inf else f"{above}, at most 3.4e38 (a float32)"
        low = f"above {self.low:g}" if self.low_open else f"{self.low:,}" if self.kind is int else f"{self.low:g}"
        high = f"below {self.high:g}" if self.high_open else f"{self.high:,}" if self.kind is int else f"{self.high:g}"
        return f"from {low} to {high}"

    def accepts(self, value) -> bool:
        """value is one the option takes: a number in range (for an option
        with words, a word or a number in range as text)."""
        if self.words:
            return isinstance(value, str) and (value in self.words or self._in_range(self._number(value)))
        return self._in_range(value)

    def _number(self, text: str):
        """text as kind, or None where it is none (int("1e9"), int("inf"), over 4,300 digits)."""
        try:
            return self.kind(text)
        except (ValueError, OverflowError):
            return None

    def _in_range(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.kind is int and not isinstance(value, int):
            return False
        if not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def parse(self, text: str):
        """An argparse type: the text as a number in range (as text, for an
        option with words; a word as it is), or an ArgumentTypeError saying
        what is expected. Any text gets one of the two: a number past every C
        type (2**64, 1e309, inf, nan) is out of range, never an OverflowError."""
        if text in self.words:
            return text
        value = self._number(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"expected {self.expected()}, got '{text[:40]}'")
        if not self._in_range(value):
            raise argparse.ArgumentTypeError(f"expected {self.expected()}, got {text[:40]}")
        return str(value) if self.words else value


def _b(name, kind, low, high, *fields, low_open=False, high_open=False, words=()) -> Bound:
    return Bound(name, kind, low, high, low_open, high_open, fields, words)


INF = math.inf
TABLE = [
    # the run
    _b("steps", int, 1, INT32_MAX),
    _b("epochs", int, 1, INT32_MAX),
    _b("seed", int, 0, UINT64_MAX, "seed"),
    _b("threads", int, 1, 512, "threads"),  # tinynn_session_new
    _b("save-every", int, 0, INT32_MAX),
    _b("keep", int, 1, 10_000),
    # the data's shape (tinynn: t_seq * t_batch <= 2^20 tokens as well)
    _b("seq", int, 1, 1 << 16, "t_seq"),
    _b("batch", int, 1, 1 << 12, "t_batch"),
    _b("grad-accum", int, 1, 1 << 16),
    _b("eval-split", float, 0, 1, high_open=True),
    # activation recomputation: keep every N-th block's input (tnn_set_recompute's int32_t)
    _b("recompute", int, 1, INT32_MAX, words=("auto", "off", "blocks")),
    # AdamW and the schedule (the AdamW row is float32 in the C core, as are a
    # model's and an adapter's scales below: FLOAT32_MAX, not any finite double)
    _b("lr", float, 0, FLOAT32_MAX, low_open=True),
    _b("min-lr", float, 0, FLOAT32_MAX),
    _b("warmup", int, 0, INT32_MAX),
    _b("weight-decay", float, 0, FLOAT32_MAX),
    _b("beta1", float, 0, 1, high_open=True),
    _b("beta2", float, 0, 1, high_open=True),
    _b("clip-norm", float, 0, FLOAT32_MAX, "clip_norm"),
    _b("init-scale", float, 0, FLOAT32_MAX, "init_scale"),
    # a model's shape (tinynn: llama.c and vit.c check the same)
    _b("vocab", int, 1, 1 << 24, "vocab"),
    _b("d-model", int, 1, 1 << 16, "d_model"),
    _b("layers", int, 1, 1024, "n_layers"),
    _b("heads", int, 1, 1024, "n_heads"),
    _b("kv-heads", int, 1, 1024, "n_kv_heads"),
    _b("d-ff", int, 0, 1 << 18, "d_ff"),
    _b("rope-base", float, 0, FLOAT32_MAX, "rope_base", low_open=True),
    # LoRA
    _b("rank", int, 1, 1 << 16, "rank"),
    _b("alpha", float, 0, FLOAT32_MAX, "alpha", low_open=True),
    # preference tuning (dpo, orpo)
    _b("beta", float, 0, 1e6, "beta", low_open=True),
    # ViT
    _b("patch", int, 1, 256, "patch"),
    _b("image-size", int, 1, 1 << 16, "image_size"),
    # generation (sampled in Python, in float64: any finite number)
    _b("max-new-tokens", int, 1, TOKENS_PER_STEP, "max_new_tokens"),
    _b("temperature", float, 0, INF, "temperature"),
    _b("top-k", int, 0, INT32_MAX, "top_k"),
    _b("top-p", float, 0, 1, "top_p"),
    _b("min-p", float, 0, 1, "min_p"),
    _b("repeat-penalty", float, 0, INF, "repeat_penalty", low_open=True),
    _b("repeat-last-n", int, -1, INT32_MAX, "repeat_last_n"),  # -1: the whole context
    _b("ctx-size", int, 0, TOKENS_PER_STEP, "ctx_size"),  # 0: the model's; the KV cache's limit
]
BY_NAME = {b.name: b for b in TABLE}
BY_FIELD = {f: b for b in TABLE for f in b.fields}


def option(name: str):
    """The argparse type of the option --name."""
    return BY_NAME[name].parse


def check(field: str, value, label: str | None = None) -> None:
    """Refuse (ToyError, TNN_ERR_ARG: bad input) a Python argument out of
    its range; label names it in the message (default: the field)."""
    bound = BY_FIELD[field]
    if not bound.accepts(value):
        raise ToyError(f"{label or field} must be {bound.expected()}, got {value!r}", TNN_ERR_ARG)


def check_fields(obj, skip: tuple = ()) -> None:
    """check() every attribute of obj (a dataclass) that the table bounds."""
    for field in BY_FIELD:
        if field not in skip and hasattr(obj, field):
            value = getattr(obj, field)
            if field == "n_kv_heads" and value is None:
                continue
            check(field, value, f"{type(obj).__name__}.{field}")


def _shown(value) -> str:
    if value is None or value == []:
        return "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def annotate_help(parser) -> None:
    """Complete each option's help (every sub-parser's too): its default,
    where the text does not already say it, and its range, for the
    bounded ones. Flags (store_true) are off unless given."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                annotate_help(sub)
            continue
        if action.help is argparse.SUPPRESS or action.default is argparse.SUPPRESS:
            continue
        text = action.help or ""
        if action.nargs != 0 and action.option_strings and "default" not in text:
            text = f"{text} (default {_shown(action.default)})".strip()
        bound = getattr(action.type, "__self__", None)
        if isinstance(bound, Bound):
            text = f"{text} [{bound.describe()}]"
        action.help = text
