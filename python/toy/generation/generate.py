"""Text generation from a llama-family GGUF (with optional LoRA adapter), from
a toy-train run directory or from a recipe being trained: greedy at
temperature 0, seeded sampling otherwise (sampling.Sampler), stopping at EOS
or a stop string, over a KV cache; the text streamed as it is produced
(streaming.TextStream)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import bounds
from ..core.errors import InputError
from ..text.tokenizer import GGUFTokenizer
from .model import GGUFModel, chat_formatter_of, context_of, encode, load_model, tokenizer_of
from .sampling import Sampler
from .streaming import TextStream

# prompt tokens decoded in one graph (llama.cpp's default batch is 512 too)
PREFILL_CHUNK = 512
# new tokens when max_new_tokens is None (fewer when the context leaves fewer)
DEFAULT_NEW_TOKENS = 64


def check_options(max_new_tokens, ctx_size, sampling: dict) -> None:
    """Refuse (ToyError, bad input) an option out of its range (toy.core.bounds)."""
    if max_new_tokens is not None:
        bounds.check("max_new_tokens", max_new_tokens)
    bounds.check("ctx_size", ctx_size)
    for field, value in sampling.items():
        bounds.check(field, value)


def generate(
    model,
    prompt: str,
    max_new_tokens: int | None = None,
    temperature: float = 0.0,
    top_k: int = 0,
    stop: tuple[str, ...] = (),
    seed: int = 0,
    tokenizer: GGUFTokenizer | None = None,
    chat: bool = False,
    *,
    top_p: float = 1.0,
    min_p: float = 0.0,
    repeat_penalty: float = 1.0,
    repeat_last_n: int = 64,
    ctx_size: int = 0,
    system: str | None = None,
    on_text: Callable[[str], object] | None = None,
) -> str:
    """The text generated after prompt. model: a recipe (its current weights,
    adapters included), a loaded model (load_model, load_run) or a GGUF path.

    max_new_tokens: at most this many (None: 64, fewer where the context
    leaves fewer). chat=True wraps prompt as a user turn in the model's chat
    template, after a system message when system is given. Sampling follows
    llama.cpp (Sampler): repeat_penalty over the last repeat_last_n tokens
    (-1: all, 0: none), top_k (0: all), top_p (1: all), min_p (0: all),
    temperature (0: greedy), seeded by seed. ctx_size: the context to allow
    (0: the model's <arch>.context_length); a prompt and max_new_tokens past
    it are refused. on_text(piece) receives the text as it is produced
    (whole characters; stop strings held back until decided); the pieces
    add up to the returned text."""
    sampling: dict[str, Any] = dict(
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        min_p=min_p,
        repeat_penalty=repeat_penalty,
        repeat_last_n=repeat_last_n,
        seed=seed,
    )
    check_options(max_new_tokens, ctx_size, sampling)
    if system is not None and not chat:
        raise InputError("a system message needs chat=True (--system needs --chat)")
    if isinstance(model, (str, Path)):
        model = load_model(model)
    if tokenizer is None:
        tokenizer = tokenizer_of(model)
    if chat:
        messages = [{"role": "system", "content": system}] if system is not None else []
        prompt = chat_formatter_of(model, tokenizer).render(
            messages + [{"role": "user", "content": prompt}], add_generation_prompt=True
        )
    return generate_ids(
        model, tokenizer, encode(tokenizer, prompt), max_new_tokens, stop, on_text, ctx_size, **sampling
    )


def generate_ids(
    model,
    tokenizer,
    ids: list[int],
    max_new_tokens: int | None,
    stop,
    on_text,
    ctx_size: int,
    reuse_cache: bool = False,
    **sampling,
) -> str:
    """generate() on the prompt's tokens. reuse_cache: keep the KV cache rows
    of the tokens the last call left there that begin this prompt too (a
    chat's history), when the model is a loaded GGUF."""
    sampler = Sampler(**sampling)
    if not ids:
        raise InputError("the prompt is empty")
    session, vocab = model.session, model.cfg.vocab
    context = context_of(model, ctx_size)
    whose = "the model's context" if ctx_size == 0 else "the context given"
    if max_new_tokens is None:
        max_new_tokens = DEFAULT_NEW_TOKENS
        if context is not None and len(ids) < context:
            max_new_tokens = min(max_new_tokens, context - len(ids))
    needed = len(ids) + max_new_tokens
    if context is not None and needed > context:
        raise InputError(
            f"the prompt ({len(ids):,} tokens) and max_new_tokens ({max_new_tokens:,}) need "
            f"{needed:,} positions, more than {whose} of {context:,} tokens: give a shorter "
            "prompt, fewer new tokens or a larger context (-c/--ctx-size)"
        )
    if session.n_ctx == 0:
        session.kv_init(max(needed, 512))
    elif needed > session.n_ctx:
        raise InputError(f"prompt + max_new_tokens ({needed}) exceeds this model's {session.n_ctx}-token cache")
    stops = [s for s in stop if s]
    # A stop string first appears when the newest token completes it, so it
    # lies in the text of the last few tokens: a token adds at least one
    # byte, a character takes at most four.
    tail = 4 * max(map(len, stops), default=0) + 1
    stream = TextStream(tokenizer, stops, on_text) if on_text is not None else None
    # the rows of the cache that hold the prompt's start already
    start = 0
    cached = getattr(model, "_kv_ids", None)
    if reuse_cache and isinstance(model, GGUFModel) and cached:
        while start < min(len(cached), len(ids) - 1) and cached[start] == ids[start]:
            start += 1
        if model.cfg.recurrent and start < len(cached):
            start = 0  # a recurrent layer's state is that of the cache's end: continue from there or anew
    model._kv_ids = None  # unknown until this call has decoded
    # the prompt in pieces: one piece's attention scores grow with its length
    # times the context, which for a whole long prompt would be gigabytes
    for begin in range(start, len(ids), PREFILL_CHUNK):
        logits = session.decode(ids[begin : begin + PREFILL_CHUNK], begin, vocab)
    out: list[int] = []
    history = list(ids)
    n_past = len(ids)
    try:
        while len(out) < max_new_tokens:
            token = sampler.pick(logits, history)
            if token in tokenizer.end_ids:
                break
            out.append(token)
            history.append(token)
            if stream is not None:
                final = stream.update(out)
                if final is not None:
                    return final
            elif stops and any(s in tokenizer.decode(out[-tail:]) for s in stops):
                text = tokenizer.decode(out)
                hits = [text.index(s) for s in stops if s in text]
                if hits:
                    return text[: min(hits)]
            if len(out) < max_new_tokens:  # the last token's logits would go unused
                logits = session.decode([token], n_past, vocab)
                n_past += 1
    finally:
        model._kv_ids = history[:n_past]  # the tokens whose keys and values the cache holds
    text = tokenizer.decode(out)
    if stream is not None:
        stream.finish(text)
    return text
