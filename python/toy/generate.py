"""Text generation from a llama-family GGUF (with optional LoRA adapter) or from a
recipe being trained: greedy at temperature 0, seeded sampling otherwise,
stopping at EOS or a stop string, over a KV cache."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import bounds
from .config import RecipeOptions
from .errors import InputError
from .gguf_file import read_metadata
from .session import ModelDesc, Session, read_gguf_config
from .tokenizer import GGUFTokenizer

# prompt tokens decoded in one graph (llama.cpp's default batch is 512 too)
PREFILL_CHUNK = 512


class GGUFModel:
    """A GGUF base, with an adapter's A and B when one is given, ready to
    decode: realized without a training graph. The tokenizer and chat
    template are read on the first generate and kept here."""

    def __init__(self, session: Session, cfg, gguf_path):
        self.session, self.cfg, self.gguf_path = session, cfg, Path(gguf_path)


def load_model(gguf_path, adapter_path=None, device: str = "cpu", threads: int | None = None,
               base_compute: str = "stored") -> GGUFModel:
    """A session on a GGUF base, with the adapter's A and B loaded when given.

    The base is computed in its stored types by default: decoding one token
    at a time reads every weight once per token, and the stored (smaller)
    types read least; base_compute="fast" makes the Q8_0 copies training
    uses (measured no faster for decoding, and they cost a second or two
    and ~250 MB to make).

    The adapter is checked against the base before anything is built
    (toy.adapter.read_adapter: InputError in one line); one that adapts
    some layers only leaves the others as the base has them."""
    desc, adapter = ModelDesc.base(gguf_path, base_compute), None
    if adapter_path is not None:
        from .adapter import read_adapter
        adapter = read_adapter(adapter_path, gguf_path)
        # a batch of one token: the training inputs are never used
        desc = ModelDesc.lora(gguf_path, RecipeOptions(t_seq=1, t_batch=1), adapter.rank, adapter.alpha,
                              adapter.targets, base_compute)
    session = Session(device, threads)
    cfg = read_gguf_config(gguf_path, session.lib)
    session.realize(desc)
    if adapter is not None:
        for weight, a, b in adapter.session_pairs():    # zeros where the adapter has no pair
            session.upload(session.find(weight + ".lora_a"), a)
            session.upload(session.find(weight + ".lora_b"), b)
    return GGUFModel(session, cfg, gguf_path)


def _tokenizer_of(model) -> GGUFTokenizer:
    """The model's GGUF tokenizer, read once and kept on the model."""
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None:
        source = getattr(model, "gguf_path", None) or getattr(model, "base_path", None)
        if source is None:
            raise InputError("generate needs a tokenizer for a model that was not loaded from a GGUF")
        tokenizer = GGUFTokenizer.from_gguf(source)
        model.tokenizer = tokenizer
    return tokenizer


def _context_length_of(model) -> int | None:
    """The context the GGUF's model was trained for (<arch>.context_length),
    None where the model is not a GGUF's or does not say."""
    if not hasattr(model, "context_length"):
        source = getattr(model, "gguf_path", None) or getattr(model, "base_path", None)
        meta = read_metadata(source, "model ", until=_is_context_length) if source is not None else {}
        value = meta.get(f"{meta.get('general.architecture')}.context_length")
        model.context_length = value if isinstance(value, int) and value > 0 else None
    return model.context_length


def _is_context_length(key: str, meta: dict) -> bool:
    return key == f"{meta.get('general.architecture')}.context_length"


def _chat_formatter_of(model, tokenizer):
    """The model's chat template rendering with tokenizer, made once per tokenizer."""
    from .instruct import ChatFormatter

    cached = getattr(model, "chat_formatter", None)
    if cached is None or cached.tokenizer is not tokenizer:
        source = getattr(model, "gguf_path", None) or getattr(model, "base_path", None)
        if source is None:
            raise InputError("chat=True needs a model loaded from a GGUF (its chat template)")
        cached = ChatFormatter.from_gguf(source, tokenizer)
        model.chat_formatter = cached
    return cached


def _pick(logits: np.ndarray, temperature: float, top_k: int, rng) -> int:
    if temperature <= 0:
        return int(np.argmax(logits))
    logits = logits.astype(np.float64) / temperature
    if 0 < top_k < logits.size:
        cutoff = np.partition(logits, -top_k)[-top_k]
        logits = np.where(logits >= cutoff, logits, -np.inf)
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    return int(rng.choice(logits.size, p=probs))


def generate(model, prompt: str, max_new_tokens: int = 64, temperature: float = 0.0, top_k: int = 0,
             stop: tuple[str, ...] = (), seed: int = 0, tokenizer: GGUFTokenizer | None = None,
             chat: bool = False) -> str:
    """The text generated after prompt. model: a recipe (its current weights,
    adapters included) or a GGUF path. chat=True wraps prompt as a user turn
    in the model's chat template."""
    for field, value in (("max_new_tokens", max_new_tokens), ("temperature", temperature),
                         ("top_k", top_k), ("seed", seed)):
        bounds.check(field, value)
    if isinstance(model, (str, Path)):
        model = load_model(model)
    if tokenizer is None:
        tokenizer = _tokenizer_of(model)
    if chat:
        prompt = _chat_formatter_of(model, tokenizer).render(
            [{"role": "user", "content": prompt}], add_generation_prompt=True)
    ids = tokenizer.encode(prompt)
    if not ids:
        raise InputError("the prompt is empty")
    session, vocab = model.session, model.cfg.vocab
    needed = len(ids) + max_new_tokens
    context = _context_length_of(model)
    if context is not None and needed > context:
        raise InputError(f"the prompt ({len(ids):,} tokens) and max_new_tokens ({max_new_tokens:,}) need "
                         f"{needed:,} positions, more than the model's context of {context:,} tokens: "
                         "give a shorter prompt or fewer new tokens")
    if session.n_ctx == 0:
        session.kv_init(max(needed, 512))
    elif needed > session.n_ctx:
        raise InputError(f"prompt + max_new_tokens ({needed}) exceeds this model's {session.n_ctx}-token cache")
    stops = [s for s in stop if s]
    # A stop string first appears when the newest token completes it, so it
    # lies in the text of the last few tokens: a token adds at least one
    # byte, a character takes at most four.
    tail = 4 * max(map(len, stops), default=0) + 1
    rng = np.random.default_rng(seed)
    # the prompt in pieces: one piece's attention scores grow with its length
    # times the context, which for a whole long prompt would be gigabytes
    for start in range(0, len(ids), PREFILL_CHUNK):
        logits = session.decode(ids[start:start + PREFILL_CHUNK], start, vocab)
    out: list[int] = []
    n_past = len(ids)
    while len(out) < max_new_tokens:
        token = _pick(logits, temperature, top_k, rng)
        if token == tokenizer.eos_id:
            break
        out.append(token)
        if stops and any(s in tokenizer.decode(out[-tail:]) for s in stops):
            text = tokenizer.decode(out)
            hits = [text.index(s) for s in stops if s in text]
            if hits:
                return text[: min(hits)]
        if len(out) < max_new_tokens:        # the last token's logits would go unused
            logits = session.decode([token], n_past, vocab)
            n_past += 1
    return tokenizer.decode(out)
