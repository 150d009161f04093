"""The tokenizer stored in a GGUF: GPT-2 style byte-level BPE, built on the
`tokenizers` library from tokenizer.ggml.tokens / merges, with the
pre-tokenizer named by tokenizer.ggml.pre."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .corpus import InputError
from .gguf_file import one_line, read_gguf

# tokenizer.ggml.pre -> how text is split before BPE: GPT-2's regex, after
# splitting digits one by one for SmolLM; Qwen2/Qwen3 have a regex of their
# own (llama.cpp's LLAMA_VOCAB_PRE_TYPE_QWEN2: contractions in any case,
# single digits, letters with one leading non-letter)
_QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_PRE_TOKENIZERS = {"smollm": "digits", "gpt2": "gpt2", "default": "gpt2", "qwen2": "qwen2"}
_CONTROL = 3   # llama.cpp token type of special tokens


def _string(field) -> str:
    return bytes(field.parts[field.data[0]]).decode("utf-8")


def _strings(field) -> list[str]:
    return [bytes(field.parts[i]).decode("utf-8") for i in field.data]


def _pre_tokenizer(kind: str):
    from tokenizers import Regex, pre_tokenizers

    if kind == "qwen2":
        return pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(_QWEN2_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    steps = [pre_tokenizers.Digits(individual_digits=True)] if kind == "digits" else []
    steps.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True))
    return pre_tokenizers.Sequence(steps)


class GGUFTokenizer:
    def __init__(self, tokens: list[str], merges: list[str], pre: str, token_types: list[int],
                 bos_id: int | None, eos_id: int | None, add_bos: bool):
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers

        if pre not in _PRE_TOKENIZERS:
            raise InputError(f"pre-tokenizer {one_line(repr(pre))} is not supported (supported: "
                             f"{', '.join(_PRE_TOKENIZERS)})")
        for name, token_id in (("BOS", bos_id), ("EOS", eos_id)):
            if token_id is not None and not 0 <= token_id < len(tokens):
                raise InputError(f"the tokenizer's {name} id {token_id} is not one of its "
                                 f"{len(tokens)} tokens")
        vocab = {tok: i for i, tok in enumerate(tokens)}
        pairs = [tuple(m.split(" ", 1)) for m in merges]
        if any(len(pair) != 2 for pair in pairs):
            raise InputError("a tokenizer merge is not two tokens separated by a space")
        try:
            self._tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False))
        except Exception as err:   # noqa: BLE001 -- tokenizers raises plain Exception
            raise InputError(f"the tokenizer's vocabulary and merges do not fit together: "
                             f"{one_line(err)}") from None
        self._tok.pre_tokenizer = _pre_tokenizer(_PRE_TOKENIZERS[pre])
        self._tok.decoder = decoders.ByteLevel()
        specials = [tok for tok, kind in zip(tokens, token_types) if kind == _CONTROL]
        if specials:
            from tokenizers import AddedToken
            self._tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
        self.vocab_size = len(tokens)
        self.bos_id, self.eos_id, self.add_bos = bos_id, eos_id, add_bos

    @classmethod
    def from_gguf(cls, path: str | Path) -> "GGUFTokenizer":
        f = read_gguf(path).fields
        try:
            return cls._from_fields(path, f)
        except (UnicodeDecodeError, ValueError, IndexError, KeyError, TypeError, OverflowError) as err:
            # a key of the wrong type or shape, a string that is not UTF-8
            raise InputError(f"{path}: the tokenizer is malformed ({type(err).__name__}: "
                             f"{one_line(err)})") from None

    @classmethod
    def _from_fields(cls, path, f) -> "GGUFTokenizer":
        model = _string(f["tokenizer.ggml.model"]) if "tokenizer.ggml.model" in f else "none"
        if model != "gpt2":
            raise InputError(f"{path}: tokenizer {one_line(repr(model))} is not supported (byte-level "
                             "BPE 'gpt2' only); pass a packed int32 --corpus instead")
        tokens = _strings(f["tokenizer.ggml.tokens"])
        merges = _strings(f["tokenizer.ggml.merges"])
        pre = _string(f["tokenizer.ggml.pre"]) if "tokenizer.ggml.pre" in f else "default"
        types = [int(f["tokenizer.ggml.token_type"].parts[i][0])
                 for i in f["tokenizer.ggml.token_type"].data] if "tokenizer.ggml.token_type" in f \
            else [1] * len(tokens)

        def scalar(key):
            return int(f[key].parts[-1][0]) if key in f else None

        add_bos = bool(scalar("tokenizer.ggml.add_bos_token") or 0)
        return cls(tokens, merges, pre, types, scalar("tokenizer.ggml.bos_token_id"),
                   scalar("tokenizer.ggml.eos_token_id"), add_bos)

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
