"""The tokenizer stored in a GGUF, built on the `tokenizers` library: GPT-2
style byte-level BPE from tokenizer.ggml.tokens / merges with the
pre-tokenizer named by tokenizer.ggml.pre (SmolLM2, Qwen), or SentencePiece
BPE from the tokens and their scores (Gemma)."""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from ..formats.gguf_file import one_line, read_metadata

# tokenizer.ggml.pre -> how text is split before BPE: GPT-2's regex, after
# splitting digits one by one for SmolLM; Qwen2/Qwen3 have a regex of their
# own (llama.cpp's LLAMA_VOCAB_PRE_TYPE_QWEN2: contractions in any case,
# single digits, letters with one leading non-letter)
_QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_PRE_TOKENIZERS = {"smollm": "digits", "gpt2": "gpt2", "default": "gpt2", "qwen2": "qwen2"}


def _pre_tokenizer(kind: str):
    from tokenizers import Regex, pre_tokenizers

    if kind == "qwen2":
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(_QWEN2_SPLIT), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    steps = [pre_tokenizers.Digits(individual_digits=True)] if kind == "digits" else []
    steps.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True))
    return pre_tokenizers.Sequence(steps)


_NORMAL, _CONTROL, _USER_DEFINED = 1, 3, 4  # llama.cpp token types


def _byte_level_bpe(tokens: list[str], merges: list[str], pre: str):
    """GPT-2 style byte-level BPE (SmolLM2, Qwen): the merges as stored."""
    from tokenizers import Tokenizer, decoders, models

    if pre not in _PRE_TOKENIZERS:
        raise InputError(
            f"pre-tokenizer {one_line(repr(pre))} is not supported (supported: {', '.join(_PRE_TOKENIZERS)})"
        )
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    if any(len(pair) != 2 for pair in pairs):
        raise InputError("a tokenizer merge is not two tokens separated by a space")
    vocab = {tok: i for i, tok in enumerate(tokens)}
    try:
        tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False))
    except Exception as err:  # noqa: BLE001 -- tokenizers raises plain Exception
        raise InputError(f"the tokenizer's vocabulary and merges do not fit together: {one_line(err)}") from None
    tok.pre_tokenizer = _pre_tokenizer(_PRE_TOKENIZERS[pre])
    tok.decoder = decoders.ByteLevel()
    return tok


def _sentencepiece_bpe(
    tokens: list[str], scores: list[float], types: list[int], unk_id: int | None, add_space_prefix: bool
):
    """SentencePiece BPE as llama.cpp's "llama" tokenizer runs it (Gemma):
    spaces become U+2581, adjacent pieces merge best score first, bytes
    outside the vocabulary fall back to <0xNN> tokens. The merges are every
    split of a normal piece into two pieces, ranked by that piece's score."""
    from tokenizers import Tokenizer, decoders, models, normalizers

    vocab = {tok: i for i, tok in enumerate(tokens)}
    ranked = sorted((i for i, kind in enumerate(types) if kind == _NORMAL), key=lambda i: (-scores[i], i))
    merges = []
    for i in ranked:
        piece = tokens[i]
        merges += [(piece[:k], piece[k:]) for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab]
    unk = tokens[unk_id] if unk_id is not None else None
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=unk, fuse_unk=True, byte_fallback=True))
    steps = [normalizers.Replace(" ", "\u2581")]
    if add_space_prefix:
        steps.insert(0, normalizers.Prepend("\u2581"))
    tok.normalizer = normalizers.Sequence(steps)
    decode = [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
    if add_space_prefix:
        decode.append(decoders.Strip(" ", 1, 0))
    tok.decoder = decoders.Sequence(decode)
    return tok


# control tokens that end a model's turn, by their text (as llama.cpp's
# end-of-generation list): a chat answer stops at them, not only at EOS
END_OF_TURN = (
    "<end_of_turn>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|end|>",
    "<|endoftext|>",
    "<|eom_id|>",
    "<EOT>",
    "<|end\u2581of\u2581sentence|>",
)


class GGUFTokenizer:
    """The tokenizer a GGUF stores: byte-level BPE ("gpt2") or SentencePiece
    BPE ("llama"), its control tokens (and, for SentencePiece, its
    user-defined ones, as llama.cpp does) matched as one token each in text."""

    def __init__(
        self,
        tok,
        tokens: list[str],
        token_types: list[int],
        bos_id: int | None,
        eos_id: int | None,
        add_bos: bool,
        whole_kinds=(_CONTROL,),
        eot_id: int | None = None,
    ):
        from tokenizers import AddedToken

        for name, token_id in (("BOS", bos_id), ("EOS", eos_id)):
            if token_id is not None and not 0 <= token_id < len(tokens):
                raise InputError(f"the tokenizer's {name} id {token_id} is not one of its {len(tokens)} tokens")
        added = [
            AddedToken(t, special=kind == _CONTROL, normalized=False)
            for t, kind in zip(tokens, token_types)
            if kind in whole_kinds
        ]
        if added:
            tok.add_special_tokens(added)
        self._tok = tok
        self.vocab_size = len(tokens)
        self.bos_id, self.eos_id, self.add_bos = bos_id, eos_id, add_bos
        # where generation stops: EOS, the file's end-of-turn token, and the known end-of-turn controls
        ends = {
            i for i, (text, kind) in enumerate(zip(tokens, token_types)) if kind == _CONTROL and text in END_OF_TURN
        }
        self.end_ids = frozenset(ends | {i for i in (eos_id, eot_id) if i is not None and 0 <= i < len(tokens)})

    @classmethod
    def from_gguf(cls, path) -> GGUFTokenizer:
        f = read_metadata(path)
        try:
            return cls._from_fields(path, f)
        except (UnicodeDecodeError, ValueError, IndexError, KeyError, TypeError, OverflowError) as err:
            # a key of the wrong type or shape, a string that is not UTF-8
            raise InputError(f"{path}: the tokenizer is malformed ({type(err).__name__}: {one_line(err)})") from None

    @classmethod
    def _from_fields(cls, path, f) -> GGUFTokenizer:
        model = f.get("tokenizer.ggml.model", "none")
        if model not in ("gpt2", "llama"):
            raise InputError(
                f"{path}: tokenizer {one_line(repr(model))} is not supported (byte-level "
                "BPE 'gpt2' or SentencePiece 'llama'); pass a packed int32 --corpus instead"
            )
        tokens = list(f["tokenizer.ggml.tokens"])
        types = [int(t) for t in f.get("tokenizer.ggml.token_type", [_NORMAL] * len(tokens))]
        if not all(isinstance(t, str) for t in tokens) or len(types) != len(tokens):
            raise InputError(f"{path}: tokenizer.ggml.tokens / token_type are not one string and one type per token")
        whole_kinds = (_CONTROL,)
        if model == "gpt2":
            tok = _byte_level_bpe(tokens, list(f["tokenizer.ggml.merges"]), f.get("tokenizer.ggml.pre", "default"))
        else:
            whole_kinds = (_CONTROL, _USER_DEFINED)
            scores = [float(x) for x in f["tokenizer.ggml.scores"]]
            tok = _sentencepiece_bpe(
                tokens,
                scores,
                types,
                f.get("tokenizer.ggml.unknown_token_id"),
                bool(f.get("tokenizer.ggml.add_space_prefix", True)),
            )
        add_bos = bool(f.get("tokenizer.ggml.add_bos_token", False))
        bos, eos = f.get("tokenizer.ggml.bos_token_id"), f.get("tokenizer.ggml.eos_token_id")
        eot = f.get("tokenizer.ggml.eot_token_id")
        return cls(
            tok,
            tokens,
            types,
            None if bos is None else int(bos),
            None if eos is None else int(eos),
            add_bos,
            whole_kinds,
            None if eot is None else int(eot),
        )

    def encode(self, text: str, add_bos: bool | None = None) -> list[int]:
        ids = self._tok.encode(text, add_special_tokens=False).ids
        if (self.add_bos if add_bos is None else add_bos) and self.bos_id is not None:
            ids = [self.bos_id] + ids
        return ids

    def decode(self, ids) -> str:
        return self._tok.decode(list(map(int, ids)), skip_special_tokens=False)

    def encode_corpus(self, text: str) -> np.ndarray:
        """A text file's tokens for training: documents split on blank lines
        would lose cross-document context, so the text is encoded whole,
        with one EOS at its end."""
        ids = self.encode(text)
        if self.eos_id is not None:
            ids.append(self.eos_id)
        return np.asarray(ids, dtype=np.int32)


# the vocabulary of toy-train's from-scratch models: the bytes of the text
BYTE_VOCAB = 256


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
