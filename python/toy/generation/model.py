"""A model loaded to generate with: a GGUF base (with a LoRA adapter's A and
B when one is given) realized without a training graph, and what generation
reads from its GGUF once -- tokenizer, chat template, context length."""

from __future__ import annotations

from pathlib import Path

from ..core.config import RecipeOptions
from ..core.errors import InputError
from ..formats.gguf_file import context_length, read_metadata
from ..native.families import generating_families
from ..native.session import ModelDesc, Session, read_gguf_config
from ..text.chat import ChatFormatter
from ..text.tokenizer import BYTE_VOCAB, ByteTokenizer, GGUFTokenizer


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
    decoded = ", ".join(generating_families())
    if arch == "gpt2":
        raise InputError(
            f"{gguf_path} is a GPT-2 model (toy-train --arch gpt2): generation runs "
            f"llama-family models only ({decoded}); toy has no cached "
            "GPT-2 decoder"
        )
    if arch == "vit":
        raise InputError(f"{gguf_path} is a ViT image classifier: generation runs language models ({decoded})")


def load_model(
    gguf_path,
    adapter_path=None,
    device: str = "cpu",
    threads: int | None = None,
    base_compute: str = "stored",
    tokenizer_path=None,
) -> GGUFModel:
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
        desc = ModelDesc.lora(
            gguf_path, RecipeOptions(t_seq=1, t_batch=1), adapter.rank, adapter.alpha, adapter.targets, base_compute
        )
    session = Session(device, threads)
    cfg = read_gguf_config(gguf_path, session.lib)
    session.realize(desc)
    if adapter is not None:
        for weight, a, b in adapter.session_pairs():  # zeros where the adapter has no pair
            session.upload(session.find(weight + ".lora_a"), a)
            session.upload(session.find(weight + ".lora_b"), b)
    return GGUFModel(session, cfg, gguf_path, tokenizer_path)


def _source_of(model):
    """The GGUF a model's tokenizer and chat template come from, or None."""
    return (
        getattr(model, "tokenizer_path", None) or getattr(model, "gguf_path", None) or getattr(model, "base_path", None)
    )


def tokenizer_of(model):
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
                raise InputError(
                    f"{source} has no tokenizer (tokenizer.ggml.model 'none') and its "
                    f"{vocab} tokens are not bytes: generation cannot turn text into its "
                    "tokens (a warm-start model: give --run RUN, for its donor's tokenizer)"
                )
            tokenizer = ByteTokenizer()
        else:
            tokenizer = GGUFTokenizer.from_gguf(source)
        model.tokenizer = tokenizer
    return tokenizer


def encode(tokenizer, text: str) -> list[int]:
    """text's tokens; InputError for a str holding bytes that are not UTF-8
    (a command line's, kept by Python as lone surrogates) where the tokenizer
    takes text only."""
    if not isinstance(tokenizer, ByteTokenizer):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise InputError(
                f"the prompt is not UTF-8 text (a byte that is not UTF-8 at character {err.start + 1})"
            ) from None
    return tokenizer.encode(text)


def _context_length_of(model) -> int | None:
    """The context the GGUF's model was trained for (<arch>.context_length),
    None where the model is not a GGUF's or does not say."""
    if not hasattr(model, "context_length"):
        source = getattr(model, "gguf_path", None) or getattr(model, "base_path", None)
        model.context_length = context_length(source, "model ") if source is not None else None
    return model.context_length


def context_of(model, ctx_size: int) -> int | None:
    """The context generation allows: ctx_size, or the model's when it is 0."""
    return ctx_size if ctx_size > 0 else _context_length_of(model)


def chat_formatter_of(model, tokenizer):
    """The model's chat template rendering with tokenizer, made once per tokenizer."""
    cached = getattr(model, "chat_formatter", None)
    if cached is None or cached.tokenizer is not tokenizer:
        source = _source_of(model)
        if source is None:
            raise InputError("chat=True needs a model loaded from a GGUF (its chat template)")
        try:
            cached = ChatFormatter.from_gguf(source, tokenizer)
        except InputError as err:
            if "has no tokenizer.chat_template" in str(err):
                raise InputError(
                    f"{source} has no chat template (tokenizer.chat_template): chat needs a chat model"
                ) from None
            raise
        model.chat_formatter = cached
    return cached
