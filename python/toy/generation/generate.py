"""Text generation from a llama-family GGUF (with optional LoRA adapter), from
a toy-train run directory or from a recipe being trained: greedy at
temperature 0, seeded sampling otherwise (llama.cpp's samplers: repeat
penalty, top-k, top-p, min-p, temperature), stopping at EOS or a stop
string, over a KV cache; the text streamed as it is produced, and chats of
several turns."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np

from ..core import bounds
from ..core.config import RecipeOptions
from ..core.errors import InputError
from ..formats.gguf_file import read_metadata
from ..native.session import ModelDesc, Session, read_gguf_config
from ..text.tokenizer import GGUFTokenizer

# prompt tokens decoded in one graph (llama.cpp's default batch is 512 too)
PREFILL_CHUNK = 512
# new tokens when max_new_tokens is None (fewer when the context leaves fewer)
DEFAULT_NEW_TOKENS = 64
# what generation runs: the architectures with a cached decoder in tinynn
GENERATES = ("llama", "qwen2", "qwen3", "gemma3")
# the vocabulary of toy-train's from-scratch models: the bytes of the text
BYTE_VOCAB = 256


class GGUFModel:
    """A GGUF base, with an adapter's A and B when one is given, ready to
    decode: realized without a training graph. The tokenizer and chat
    template are read on the first generate and kept here; tokenizer_path
    is the GGUF they are read from when it is not the model's own (a
    warm-start model: its donor's)."""

    def __init__(self, session: Session, cfg, gguf_path, tokenizer_path=None):
        self.session, self.cfg, self.gguf_path = session, cfg, Path(gguf_path)
        self.tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None


def _check_architecture(gguf_path) -> None:
    """Refuse, in one line, a model whose architecture generation does not run
    (before the C core names it in words about training)."""
    meta = read_metadata(gguf_path, "model ", until=lambda key, _: key == "general.architecture")
    arch = meta.get("general.architecture")
    if arch == "gpt2":
        raise InputError(f"{gguf_path} is a GPT-2 model (toy-train --arch gpt2): generation runs "
                         f"llama-family models only ({', '.join(GENERATES)}); toy has no cached "
                         "GPT-2 decoder")
    if arch == "vit":
        raise InputError(f"{gguf_path} is a ViT image classifier: generation runs language models "
                         f"({', '.join(GENERATES)})")


def load_model(gguf_path, adapter_path=None, device: str = "cpu", threads: int | None = None,
               base_compute: str = "stored", tokenizer_path=None) -> GGUFModel:
    """A session on a GGUF base, with the adapter's A and B loaded when given.

    The base is computed in its stored types by default: decoding one token
    at a time reads every weight once per token, and the stored (smaller)
    types read least; base_compute="fast" makes the Q8_0 copies training
    uses (measured no faster for decoding, and they cost a second or two
    and ~250 MB to make).

    The adapter is checked against the base before anything is built
    (toy.formats.adapter.read_adapter: InputError in one line); one that adapts
    some layers only leaves the others as the base has them.
    tokenizer_path: a GGUF whose tokenizer and chat template to use in
    place of the model's own (a warm-start model stores none)."""
    _check_architecture(gguf_path)
    desc, adapter = ModelDesc.base(gguf_path, base_compute), None
    if adapter_path is not None:
        from ..formats.adapter import read_adapter
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
    return GGUFModel(session, cfg, gguf_path, tokenizer_path)


# ---- toy-train run directories ------------------------------------------------

def run_files(run) -> tuple[Path, Path | None, Path | None]:
    """What a toy-train run directory generates with: (model GGUF, adapter GGUF
    or None, GGUF of the tokenizer when not the model's own or None).

    lora and instruct runs: config.json's "base" and the run's adapter.gguf;
    from-scratch, full and warm-start runs: the run's model.gguf (a
    warm-start model with its donor's tokenizer). InputError in one line,
    naming the file, for anything missing or damaged."""
    run = Path(run)
    if not run.is_dir():
        raise InputError(f"--run {run} is not a directory: give a toy-train run directory (runs/<run_id>)")
    config_path = run / "config.json"
    damaged = f"{config_path} is damaged"
    try:
        config = json.loads(config_path.read_bytes())
    except FileNotFoundError:
        raise InputError(f"{config_path} not found: --run takes the directory of a toy-train run") from None
    except OSError as err:
        raise InputError(f"cannot read {config_path}: {err.strerror}") from None
    except (ValueError, RecursionError):
        raise InputError(f"{damaged}: it is not JSON") from None
    if not isinstance(config, dict) or not isinstance(config.get("recipe"), str):
        raise InputError(f"{damaged}: it names no recipe")
    recipe = config["recipe"]
    if recipe == "vit-tiny":
        raise InputError(f"{run} is a vit-tiny run (an image classifier): toy-generate runs language models")

    def named_file(key: str, what: str) -> Path:
        value = config.get(key)
        if not isinstance(value, str) or not value or "\0" in value:
            raise InputError(f"{damaged}: its {key!r} is not a file name")
        path = Path(value)
        if not path.is_file():
            raise InputError(f"{what} {path}, named in {config_path}, is not a file")
        return path

    def written(name: str) -> Path:
        path = run / name
        if not path.is_file():
            raise InputError(f"{run} has no {name}: the run has not finished (toy-train --resume {run})")
        return path

    from ..recipes import ADAPTER_RECIPES
    if recipe in ADAPTER_RECIPES:
        base = named_file("base", "the base model")
        return base, written("adapter.gguf"), None
    model = written("model.gguf")
    donor = named_file("donor", "the donor, whose tokenizer the model uses,") if recipe == "warm-start" else None
    return model, None, donor


def load_run(run, device: str = "cpu", threads: int | None = None) -> GGUFModel:
    """load_model on what a toy-train run directory holds (run_files)."""
    model, adapter, tokenizer_path = run_files(run)
    return load_model(model, adapter, device, threads, tokenizer_path=tokenizer_path)


# ---- tokenizers ---------------------------------------------------------------

class ByteTokenizer:
    """The tokens of toy-train's from-scratch models: the bytes of the text.
    Text in is UTF-8 (a str from a command line keeps the bytes it was
    given); bytes out that are not UTF-8 show as U+FFFD."""

    vocab_size = BYTE_VOCAB
    bos_id = eos_id = None
    end_ids = frozenset()
    add_bos = False

    def encode(self, text: str, add_bos: bool | None = None) -> list[int]:
        return list(text.encode("utf-8", "surrogateescape"))

    def decode(self, ids) -> str:
        return bytes(int(i) for i in ids).decode("utf-8", "replace")


def _source_of(model):
    """The GGUF a model's tokenizer and chat template come from, or None."""
    return (getattr(model, "tokenizer_path", None) or getattr(model, "gguf_path", None)
            or getattr(model, "base_path", None))


def _tokenizer_of(model):
    """The model's tokenizer, read once and kept on the model: the GGUF's, or
    bytes for a GGUF without one whose vocabulary is the 256 bytes."""
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None:
        source = _source_of(model)
        if source is None:
            raise InputError("generate needs a tokenizer for a model that was not loaded from a GGUF")
        meta = read_metadata(source, "model ", until=lambda key, _: key == "tokenizer.ggml.model")
        kind = meta.get("tokenizer.ggml.model", "none")
        if kind == "none":
            vocab = getattr(getattr(model, "cfg", None), "vocab", None)
            if vocab != BYTE_VOCAB:
                raise InputError(f"{source} has no tokenizer (tokenizer.ggml.model 'none') and its "
                                 f"{vocab} tokens are not bytes: generation cannot turn text into its "
                                 "tokens (a warm-start model: give --run RUN, for its donor's tokenizer)")
            tokenizer = ByteTokenizer()
        else:
            tokenizer = GGUFTokenizer.from_gguf(source)
        model.tokenizer = tokenizer
    return tokenizer


def _encode(tokenizer, text: str) -> list[int]:
    """text's tokens; InputError for a str holding bytes that are not UTF-8
    (a command line's, kept by Python as lone surrogates) where the tokenizer
    takes text only."""
    if not isinstance(tokenizer, ByteTokenizer):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise InputError(f"the prompt is not UTF-8 text (a byte that is not UTF-8 at character "
                             f"{err.start + 1})") from None
    return tokenizer.encode(text)


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


def _context_of(model, ctx_size: int) -> int | None:
    """The context generation allows: ctx_size, or the model's when it is 0."""
    return ctx_size if ctx_size > 0 else _context_length_of(model)


def _chat_formatter_of(model, tokenizer):
    """The model's chat template rendering with tokenizer, made once per tokenizer."""
    from ..text.chat import ChatFormatter

    cached = getattr(model, "chat_formatter", None)
    if cached is None or cached.tokenizer is not tokenizer:
        source = _source_of(model)
        if source is None:
            raise InputError("chat=True needs a model loaded from a GGUF (its chat template)")
        try:
            cached = ChatFormatter.from_gguf(source, tokenizer)
        except InputError as err:
            if "has no tokenizer.chat_template" in str(err):
                raise InputError(f"{source} has no chat template (tokenizer.chat_template): chat needs a "
                                 "chat model") from None
            raise
        model.chat_formatter = cached
    return cached


# ---- sampling -----------------------------------------------------------------

class Sampler:
    """llama.cpp's sampler chain, in its order: the repeat penalty over the
    last repeat_last_n tokens (prompt included), top-k, top-p, min-p (these
    three on the probabilities at temperature 1), then temperature and a
    seeded draw. Temperature 0 is greedy: the likeliest token after the
    penalty."""

    def __init__(self, temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0,
                 repeat_penalty: float = 1.0, repeat_last_n: int = 64, seed: int = 0):
        self.temperature, self.top_k, self.top_p, self.min_p = temperature, top_k, top_p, min_p
        self.repeat_penalty, self.repeat_last_n = repeat_penalty, repeat_last_n
        self.rng = np.random.default_rng(seed)

    def penalize(self, logits: np.ndarray, history) -> np.ndarray:
        """logits with every token seen in the window made less likely:
        positive logits divided by the penalty, negative ones multiplied."""
        n = self.repeat_last_n
        if self.repeat_penalty == 1.0 or n == 0 or not len(history):
            return logits
        window = history if n < 0 else history[-n:]
        seen = np.unique(np.asarray(window, dtype=np.int64))
        seen = seen[(seen >= 0) & (seen < logits.size)]
        logits = logits.copy()
        values = logits[seen]
        logits[seen] = np.where(values <= 0, values * self.repeat_penalty, values / self.repeat_penalty)
        return logits

    def pick(self, logits: np.ndarray, history=()) -> int:
        logits = self.penalize(logits, history)
        if self.temperature <= 0:
            return int(np.argmax(logits))
        raw = logits.astype(np.float64)
        # shifted first: a temperature near 0 takes the others to -inf, the likeliest stays at 0
        with np.errstate(over="ignore"):
            logits = (raw - raw.max()) / self.temperature
        if 0 < self.top_k < logits.size:
            cutoff = np.partition(logits, -self.top_k)[-self.top_k]
            logits = np.where(logits >= cutoff, logits, -np.inf)
        if self.top_p < 1.0 or self.min_p > 0.0:
            kept = self._nucleus(np.where(np.isfinite(logits), raw, -np.inf))
            logits = np.where(kept, logits, -np.inf)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        return int(self.rng.choice(logits.size, p=probs))

    def _nucleus(self, raw: np.ndarray) -> np.ndarray:
        """Which tokens top-p and min-p keep, from the logits at temperature 1
        (-inf where top-k dropped the token); the likeliest is always kept."""
        probs = np.exp(raw - raw.max())
        probs /= probs.sum()
        kept = np.isfinite(raw)
        if self.top_p < 1.0:
            order = np.argsort(-probs, kind="stable")
            # the fewest likeliest tokens whose probabilities add up to top_p
            last = int(np.searchsorted(np.cumsum(probs[order]), self.top_p))
            nucleus = np.zeros_like(kept)
            nucleus[order[:min(last, probs.size - 1) + 1]] = True
            kept &= nucleus
        if self.min_p > 0.0:
            kept &= probs >= self.min_p * probs.max()
        kept[int(np.argmax(probs))] = True
        return kept


# ---- streaming ----------------------------------------------------------------

class TextStream:
    """The generated text handed to on_text as it is produced: only whole
    characters (a character whose bytes span tokens waits for its last one)
    and never text that could still turn out to begin a stop string. The
    pieces add up to exactly what generate returns."""

    def __init__(self, tokenizer, stops: list[str], on_text: Callable[[str], object]):
        self.tokenizer, self.stops, self.on_text = tokenizer, stops, on_text
        self.sent = ""

    def _send(self, text: str) -> None:
        if len(text) > len(self.sent) and text.startswith(self.sent):
            piece, self.sent = text[len(self.sent):], text
            self.on_text(piece)

    def update(self, out: list[int]) -> str | None:
        """After a new token: sends what is decided; returns the final text
        when a stop string ended it, else None."""
        text = self.tokenizer.decode(out)
        hits = [text.index(s) for s in self.stops if s in text]
        if hits:
            final = text[: min(hits)]
            self.finish(final)
            return final
        # a character still missing bytes decodes as U+FFFD at the end
        ready = text.rstrip("\ufffd")
        held = max((k for s in self.stops for k in range(1, len(s)) if ready.endswith(s[:k])), default=0)
        self._send(ready[: len(ready) - held])
        return None

    def finish(self, text: str) -> None:
        self._send(text)


# ---- generation ---------------------------------------------------------------

def _check_options(max_new_tokens, ctx_size, sampling: dict) -> None:
    """Refuse (ToyError, bad input) an option out of its range (toy.core.bounds)."""
    if max_new_tokens is not None:
        bounds.check("max_new_tokens", max_new_tokens)
    bounds.check("ctx_size", ctx_size)
    for field, value in sampling.items():
        bounds.check(field, value)


def generate(model, prompt: str, max_new_tokens: int | None = None, temperature: float = 0.0, top_k: int = 0,
             stop: tuple[str, ...] = (), seed: int = 0, tokenizer: GGUFTokenizer | None = None,
             chat: bool = False, *, top_p: float = 1.0, min_p: float = 0.0, repeat_penalty: float = 1.0,
             repeat_last_n: int = 64, ctx_size: int = 0, system: str | None = None,
             on_text: Callable[[str], object] | None = None) -> str:
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
    sampling = dict(temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p,
                    repeat_penalty=repeat_penalty, repeat_last_n=repeat_last_n, seed=seed)
    _check_options(max_new_tokens, ctx_size, sampling)
    if system is not None and not chat:
        raise InputError("a system message needs chat=True (--system needs --chat)")
    if isinstance(model, (str, Path)):
        model = load_model(model)
    if tokenizer is None:
        tokenizer = _tokenizer_of(model)
    if chat:
        messages = ([{"role": "system", "content": system}] if system is not None else [])
        prompt = _chat_formatter_of(model, tokenizer).render(
            messages + [{"role": "user", "content": prompt}], add_generation_prompt=True)
    return _generate(model, tokenizer, _encode(tokenizer, prompt), max_new_tokens, stop, on_text, ctx_size,
                     **sampling)


def _generate(model, tokenizer, ids: list[int], max_new_tokens: int | None, stop, on_text, ctx_size: int,
              reuse_cache: bool = False, **sampling) -> str:
    """generate() on the prompt's tokens. reuse_cache: keep the KV cache rows
    of the tokens the last call left there that begin this prompt too (a
    chat's history), when the model is a loaded GGUF."""
    sampler = Sampler(**sampling)
    if not ids:
        raise InputError("the prompt is empty")
    session, vocab = model.session, model.cfg.vocab
    context = _context_of(model, ctx_size)
    whose = "the model's context" if ctx_size == 0 else "the context given"
    if max_new_tokens is None:
        max_new_tokens = DEFAULT_NEW_TOKENS
        if context is not None and len(ids) < context:
            max_new_tokens = min(max_new_tokens, context - len(ids))
    needed = len(ids) + max_new_tokens
    if context is not None and needed > context:
        raise InputError(f"the prompt ({len(ids):,} tokens) and max_new_tokens ({max_new_tokens:,}) need "
                         f"{needed:,} positions, more than {whose} of {context:,} tokens: give a shorter "
                         "prompt, fewer new tokens or a larger context (-c/--ctx-size)")
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
    model._kv_ids = None                 # unknown until this call has decoded
    # the prompt in pieces: one piece's attention scores grow with its length
    # times the context, which for a whole long prompt would be gigabytes
    for begin in range(start, len(ids), PREFILL_CHUNK):
        logits = session.decode(ids[begin:begin + PREFILL_CHUNK], begin, vocab)
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
            if len(out) < max_new_tokens:        # the last token's logits would go unused
                logits = session.decode([token], n_past, vocab)
                n_past += 1
    finally:
        model._kv_ids = history[:n_past]    # the tokens whose keys and values the cache holds
    text = tokenizer.decode(out)
    if stream is not None:
        stream.finish(text)
    return text


# ---- chat ---------------------------------------------------------------------

class Chat:
    """A conversation of several turns with a model: each answer is
    generated after the model's chat template rendered over every turn so
    far (a system message first when given), then kept as the assistant's
    turn. When the conversation outgrows the context, its oldest exchanges
    are dropped (the system message stays); `dropped` counts them, and
    on_drop() is called at each.

    The model's KV cache is made for the whole context up front, and the
    rows of the history a turn shares with the last one are kept: the
    model should not decode anything else between turns."""

    def __init__(self, model, system: str | None = None, ctx_size: int = 0, tokenizer=None,
                 on_drop: Callable[[], object] | None = None):
        bounds.check("ctx_size", ctx_size)
        self.on_drop = on_drop
        self.model = load_model(model) if isinstance(model, (str, Path)) else model
        self.tokenizer = tokenizer or _tokenizer_of(self.model)
        self.formatter = _chat_formatter_of(self.model, self.tokenizer)
        self.system, self.ctx_size = system, ctx_size
        self.context = _context_of(self.model, ctx_size)
        self.turns: list[dict] = []        # user, assistant, user, assistant ...
        self.dropped = 0

    def _messages(self, user: str) -> list[dict]:
        system = [{"role": "system", "content": self.system}] if self.system is not None else []
        return system + self.turns + [{"role": "user", "content": user}]

    def prompt_for(self, user: str, room: int = DEFAULT_NEW_TOKENS) -> str:
        """The prompt the answer to user is generated after: the template over
        the conversation and this turn, with the assistant's turn opened.
        The oldest exchanges are dropped while the prompt and room new
        tokens would not fit the context."""
        while True:
            text = self.formatter.render(self._messages(user), add_generation_prompt=True)
            if (self.context is None or not self.turns
                    or len(_encode(self.tokenizer, text)) + room <= self.context):
                return text
            del self.turns[:2]
            self.dropped += 1
            if self.on_drop is not None:
                self.on_drop()

    def _make_cache(self) -> None:
        session = self.model.session
        if session.n_ctx == 0 and self.context is not None:
            from ..core.machine import check_fits
            from ..core.plan import kv_cache_bytes

            if session.token_config is not None:
                check_fits(kv_cache_bytes(session.token_config, self.context),
                           f"a chat's KV cache of {self.context:,} positions", "give a smaller -c/--ctx-size")
            session.kv_init(self.context)
        if session.n_ctx and (self.context is None or session.n_ctx < self.context):
            self.context = session.n_ctx        # a cache made before the chat: the turns must fit it

    def say(self, user: str, max_new_tokens: int | None = None, on_text=None, stop: tuple[str, ...] = (),
            **options) -> str:
        """The model's answer to user, kept in the conversation; max_new_tokens,
        on_text, stop and the sampling options (temperature, top_k, top_p,
        min_p, repeat_penalty, repeat_last_n, seed) as generate() takes them."""
        unknown = sorted(set(options) - set(_SAMPLING_DEFAULTS))
        if unknown:
            raise TypeError(f"Chat.say() got an unexpected keyword argument {unknown[0]!r}")
        sampling = {**_SAMPLING_DEFAULTS, **options}
        _check_options(max_new_tokens, self.ctx_size, sampling)
        if not user:
            raise InputError("an empty message")
        self._make_cache()
        prompt = self.prompt_for(user, DEFAULT_NEW_TOKENS if max_new_tokens is None else max_new_tokens)
        answer = _generate(self.model, self.tokenizer, _encode(self.tokenizer, prompt), max_new_tokens, stop,
                           on_text, self.ctx_size, reuse_cache=True, **sampling)
        self.turns += [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]
        return answer


_SAMPLING_DEFAULTS = dict(temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0,
                          repeat_last_n=64, seed=0)
