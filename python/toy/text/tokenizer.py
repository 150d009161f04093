"""The tokenizer stored in a GGUF, tokenizing as llama.cpp tokenizes.

A GGUF names its tokenizer twice: tokenizer.ggml.model says the vocabulary
type (byte-level BPE "gpt2", SentencePiece "llama", Gemma 4's "gemma4"), and
tokenizer.ggml.pre, for BPE, the pre-tokenizer: the regular expressions that
cut text into words before the merges run. Both tables below are data, one
row per name llama.cpp accepts (src/llama-vocab.cpp); the merges themselves
run in the `tokenizers` library. What llama.cpp does around them is done
here, in the same order:

  1. special tokens (CONTROL, USER_DEFINED and UNKNOWN) are cut out of the
     text first, longest first, each matched whole wherever it occurs
     (parse_special=False leaves CONTROL and UNKNOWN as text, as llama.cpp's
     own tokenizer tests do);
  2. each remaining fragment is tokenized on its own: SentencePiece prefixes
     it with a space where the vocabulary says add_space_prefix;
  3. BOS (and EOS) are added as tokenizer.ggml.add_bos_token / add_eos_token
     say, llama.cpp's defaults for the vocabulary where the key is absent.

encode_with_offsets() also says which characters of the text each token
came from: instruct data is rendered once and tokenized once, and the
trained tokens are those whose text lies in an assistant turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..core.errors import InputError
from ..formats.gguf_file import one_line, read_metadata

# llama.cpp's token types (tokenizer.ggml.token_type)
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED = 1, 2, 3, 4
# matched whole in text, as llama.cpp's special-token cache (every vocabulary type)
_SPECIAL_KINDS = (_CONTROL, _USER_DEFINED, _UNKNOWN)

# the contractions of the Llama 3 / Qwen family of regexes, in any case
_CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_LLAMA3 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_QWEN2 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_QWEN35 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_TEKKEN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# GPT-4o's (o200k; Phi-4-mini): a word is a run of cased letters, upper then lower
# (camelCase splits), a contraction attached in any case; digits by three; a
# punctuation run keeps the newlines and slashes after it
_GPT4O_UPPER, _GPT4O_LOWER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_GPT4O = (
    rf"[^\r\n\p{{L}}\p{{N}}]?{_GPT4O_UPPER}*{_GPT4O_LOWER}+{_CONTRACTIONS}?"
    rf"|[^\r\n\p{{L}}\p{{N}}]?{_GPT4O_UPPER}+{_GPT4O_LOWER}*{_CONTRACTIONS}?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"  # DeepSeek's runs of CJK and Hangul


@dataclass(frozen=True)
class PreTokenizer:
    """How a byte-level BPE vocabulary cuts text into words: each regex in
    turn splits every piece so far into its matches and the text between
    them (llama.cpp's unicode_regex_split; `tokenizers`' Split "isolated")."""

    regexes: tuple[str, ...]
    ignore_merges: bool = False  # a word that is itself a token is that token (Llama 3)
    add_bos: bool = False  # llama.cpp's default where the GGUF has no add_bos_token


_LLAMA3_ROW = PreTokenizer((_LLAMA3,), ignore_merges=True, add_bos=True)
_GPT2_ROW = PreTokenizer((_GPT2,))
_DIGITS_GPT2_ROW = PreTokenizer((r"\p{N}", _GPT2))  # StarCoder, SmolLM, Command R: single digits
_QWEN2_ROW = PreTokenizer((_QWEN2,))

# tokenizer.ggml.pre -> its pre-tokenizer, for every name below as llama.cpp reads it
PRE_TOKENIZERS: dict[str, PreTokenizer] = {
    # a BPE GGUF without the key gets llama.cpp's default, not GPT-2's
    "default": PreTokenizer((r"[\p{P}\$\+<=>\^~\|]+", _GPT2, r"\p{N}+", "[0-9][0-9][0-9]")),
    **dict.fromkeys(("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "lfm2"), _LLAMA3_ROW),
    **dict.fromkeys(("dbrx", "smaug-bpe"), PreTokenizer((_LLAMA3,))),
    "deepseek-llm": PreTokenizer(
        (
            r"[\r\n]",
            r"\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
            r"\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
            r"\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba"
            r"\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45"
            r"\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe"
            r"\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc"
            r"\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
            r"\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3"
            r"\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06"
            r"\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3"
            r"\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df"
            r"\U0001e900-\U0001e943]+",
            r"\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+",
            r"\s+$",
            _CJK,
            r"\p{N}+",
        )
    ),
    "deepseek-coder": PreTokenizer((r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK, r"\p{N}")),
    "falcon": PreTokenizer(
        (
            r"[\p{P}\$\+<=>\^~\|`]+",
            r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)",
            "[0-9][0-9][0-9]",
        )
    ),
    **dict.fromkeys(
        ("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"), _DIGITS_GPT2_ROW
    ),
    **dict.fromkeys(("gpt-2", "phi-2", "mpt", "olmo", "jais", "trillion", "exaone4", "a.x-4.0"), _GPT2_ROW),
    **dict.fromkeys(("qwen2", "deepseek-r1-qwen", "stablelm2", "megrez", "hunyuan", "solar-open"), _QWEN2_ROW),
    "qwen35": PreTokenizer((_QWEN35,)),
    **dict.fromkeys(("chatglm-bpe", "glm4"), PreTokenizer((_LLAMA3,), ignore_merges=True)),
    "tekken": PreTokenizer((_TEKKEN,), ignore_merges=True, add_bos=True),
    "gpt-4o": PreTokenizer((_GPT4O,)),
}

# tokenizer.ggml.model names of encoders: not language models toy can train
_ENCODER_MODELS = ("bert", "t5")


def _regex_splits(regexes):
    from tokenizers import Regex, pre_tokenizers

    return [pre_tokenizers.Split(Regex(r), behavior="isolated") for r in regexes]


def _byte_level_bpe(tokens: list[str], merges: list[str], pre: PreTokenizer):
    """GPT-2 style byte-level BPE: text bytes mapped to printable characters,
    the merges as stored, ranked by their order."""
    from tokenizers import Tokenizer, decoders, pre_tokenizers

    tok = Tokenizer(_bpe(tokens, merges, ignore_merges=pre.ignore_merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        _regex_splits(pre.regexes) + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tok.decoder = decoders.ByteLevel()
    return tok


def _bpe(tokens, merges, **options):
    from tokenizers import models

    pairs = [tuple(m.split(" ", 1)) for m in merges]
    if any(len(pair) != 2 for pair in pairs):
        raise InputError("a tokenizer merge is not two tokens separated by a space")
    vocab = {tok: i for i, tok in enumerate(tokens)}
    try:
        return models.BPE(vocab=vocab, merges=pairs, fuse_unk=False, **options)
    except Exception as err:  # noqa: BLE001 -- tokenizers raises plain Exception
        raise InputError(f"the tokenizer's vocabulary and merges do not fit together: {one_line(err)}") from None


def _gemma4_bpe(tokens: list[str], merges: list[str]):
    """Gemma 4's BPE: SentencePiece-style text (spaces as U+2581, raw UTF-8,
    unknown bytes as <0xNN>) with ranked merges, run over each run of
    newlines and each run of other text; a run of newlines that is a token
    is that token."""
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers

    tok = Tokenizer(_bpe(tokens, merges, byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "\u2581")
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[^\n]+|\n+"), behavior="isolated")
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    return tok


def _sentencepiece_bpe(
    tokens: list[str], scores: list[float], types: list[int], unk_id: int | None, add_space_prefix: bool
):
    """SentencePiece BPE as llama.cpp's "llama" tokenizer runs it: spaces
    become U+2581, adjacent pieces merge best score first, bytes outside the
    vocabulary fall back to <0xNN> tokens. The merges are every split of a
    normal piece into two pieces, ranked by that piece's score."""
    from tokenizers import Tokenizer, decoders, models

    vocab = {tok: i for i, tok in enumerate(tokens)}
    ranked = sorted((i for i, kind in enumerate(types) if kind == _NORMAL), key=lambda i: (-scores[i], i))
    merges = []
    for i in ranked:
        piece = tokens[i]
        merges += [(piece[:k], piece[k:]) for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab]
    unk = tokens[unk_id] if unk_id is not None and 0 <= unk_id < len(tokens) else None
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=unk, fuse_unk=True, byte_fallback=True))
    tok.normalizer = _sentencepiece_normalizer(add_space_prefix)
    decode = [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
    if add_space_prefix:
        decode.append(decoders.Strip(" ", 1, 0))
    tok.decoder = decoders.Sequence(decode)
    return tok


def _sentencepiece_normalizer(add_space_prefix: bool):
    """Spaces as U+2581, and one before the text where the vocabulary says so."""
    from tokenizers import normalizers

    steps = [normalizers.Replace(" ", "\u2581")]
    if add_space_prefix:
        steps.insert(0, normalizers.Prepend("\u2581"))
    return normalizers.Sequence(steps)


# control tokens that end a model's turn, by their text: llama.cpp's
# end-of-generation list (src/llama-vocab.cpp, 0.3.36): a chat answer stops
# at them, not only at EOS
END_OF_TURN = (
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
    "[e~[",
)
# Tokens llama.cpp makes CONTROL by their text whatever the file's type
# says ("control-looking token ... its type will be overridden"): the
# end-of-generation list and its end-of-turn and fill-in-the-middle
# markers. A CONTROL token is matched whole in running text with special
# tokens on, so Qwen's NORMAL-typed "</s>" is one token there, not four.
CONTROL_LOOKING = frozenset(
    (
        *END_OF_TURN,
        "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>", "\u2581<PRE>",
        "<|code_prefix|>", "<|prefix|>",
        "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>", "\u2581<SUF>",
        "<|code_suffix|>", "<|suffix|>",
        "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>", "\u2581<MID>",
        "<|code_middle|>", "<|middle|>",
        "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
        "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
        "<|file_sep|>",
    )
)  # fmt: skip
# gpt-oss's harmony markers, which llama.cpp always renders: USER_DEFINED
HARMONY_MARKERS = frozenset(("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"))


def llama_cpp_token_types(tokens: list[str], token_types: list[int]) -> list[int]:
    """The file's token types as llama.cpp loads them: control-looking
    tokens made CONTROL, harmony's markers USER_DEFINED, and its two
    exceptions: "<|end|>" beside harmony's (or Solar Open's) own ends is
    USER_DEFINED, and "</s>" beside Gemma 4's "<|tool_response>" (or
    PLaMo's end) NORMAL; neither then ends a turn."""
    present = set(tokens)
    calls = bool({"<|call|>", "<|calls|>"} & present)
    kinds = {text: _CONTROL for text in CONTROL_LOOKING & present}
    kinds.update(dict.fromkeys(HARMONY_MARKERS & present, _USER_DEFINED))
    if "<|end|>" in present and calls and ({"<|return|>", "<|flush|>"} & present):
        kinds["<|end|>"] = _USER_DEFINED
    if "</s>" in present and {"<|tool_response>", "<|plamo:eos|>"} & present:
        kinds["</s>"] = _NORMAL
    return [kinds.get(text, kind) for text, kind in zip(tokens, token_types)]


VOCABULARY_TYPES = ("gpt2 (byte-level BPE)", "llama (SentencePiece)", "gemma4")


class GGUFTokenizer:
    """The tokenizer a GGUF stores, as llama.cpp runs it (module docstring).

    tok = GGUFTokenizer.from_gguf("model.gguf")
    ids = tok.encode("Hello world")              # BOS first where the model takes one
    ids, spans = tok.encode_with_offsets(text)   # each token's [start, end) in text
    """

    def __init__(
        self,
        tok,
        tokens: list[str],
        token_types: list[int],
        bos_id: int | None,
        eos_id: int | None,
        add_bos: bool,
        add_eos: bool = False,
        eot_id: int | None = None,
        rstrip: frozenset = frozenset(),
        space_prefix: bool = False,
    ):
        for name, token_id in (("BOS", bos_id), ("EOS", eos_id)):
            if token_id is not None and not 0 <= token_id < len(tokens):
                raise InputError(f"the tokenizer's {name} id {token_id} is not one of its {len(tokens)} tokens")
        self._tok = tok
        self.tokens = tokens
        self.vocab_size = len(tokens)
        self.bos_id, self.eos_id = bos_id, eos_id
        self.add_bos = add_bos and bos_id is not None
        self.add_eos = add_eos and eos_id is not None
        token_types = llama_cpp_token_types(tokens, token_types)
        # the special tokens, longest first (ties by id: the same order every run)
        special = [i for i, kind in enumerate(token_types) if kind in _SPECIAL_KINDS and tokens[i]]
        self._special = sorted(special, key=lambda i: (-len(tokens[i]), i))
        # the special tokens by length, and the characters they start with: finding which of
        # them a text holds is then one pass over the text, not one per token (Gemma has 6,000)
        self._special_by_length: dict[int, dict[str, int]] = {}
        for i in special:
            self._special_by_length.setdefault(len(tokens[i]), {})[tokens[i]] = i
        starts = sorted({tokens[i][0] for i in special})
        self._special_start = re.compile("[" + "".join(re.escape(c) for c in starts) + "]") if starts else None
        self._types = token_types
        self._rstrip = rstrip  # special tokens that eat the whitespace after them (Phi-3)
        self._space_prefix = space_prefix  # SentencePiece's, before each text fragment
        self._continuation = None  # the tokenizer without it (_continuation_tokenizer)
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
        if model in _ENCODER_MODELS:
            raise InputError(
                f"{path}: tokenizer {one_line(repr(model))} belongs to an encoder (BERT, T5), "
                "which toy does not train; toy trains decoder language models"
            )
        if model not in ("gpt2", "llama", "gemma4"):
            raise InputError(
                f"{path}: tokenizer {one_line(repr(model))} is not supported (supported: "
                f"{', '.join(VOCABULARY_TYPES)}); pass a packed int32 --corpus instead"
            )
        tokens = list(f["tokenizer.ggml.tokens"])
        types = [int(t) for t in f.get("tokenizer.ggml.token_type", [_NORMAL] * len(tokens))]
        if not all(isinstance(t, str) for t in tokens) or len(types) != len(tokens):
            raise InputError(f"{path}: tokenizer.ggml.tokens / token_type are not one string and one type per token")
        add_bos, rstrip, space_prefix = False, frozenset(), False
        if model == "gpt2":
            pre_name = f.get("tokenizer.ggml.pre", "default")
            pre = PRE_TOKENIZERS.get(pre_name)
            if pre is None:
                raise InputError(
                    f"{path}: pre-tokenizer {one_line(repr(pre_name))} is not supported "
                    f"(supported: {', '.join(PRE_TOKENIZERS)})"
                )
            tok = _byte_level_bpe(tokens, list(f["tokenizer.ggml.merges"]), pre)
            add_bos = pre.add_bos
        elif model == "gemma4":
            tok = _gemma4_bpe(tokens, list(f["tokenizer.ggml.merges"]))
            add_bos = True
        else:
            scores = [float(x) for x in f["tokenizer.ggml.scores"]]
            space_prefix = bool(f.get("tokenizer.ggml.add_space_prefix", True))
            tok = _sentencepiece_bpe(tokens, scores, types, f.get("tokenizer.ggml.unknown_token_id", 0), space_prefix)
            add_bos = True
            if any(name in str(f.get("general.name", "")).lower() for name in ("phi-3", "phi3")):
                # llama.cpp: Phi-3's special tokens eat the whitespace after them, but for these
                keep = {"<unk>", "<s>", "<|endoftext|>"}
                rstrip = frozenset(
                    i
                    for i, (t, k) in enumerate(zip(tokens, types))
                    if (k in _SPECIAL_KINDS or t == "</s>") and t not in keep
                )
        add_bos = bool(f.get("tokenizer.ggml.add_bos_token", add_bos))
        add_eos = bool(f.get("tokenizer.ggml.add_eos_token", False))
        bos, eos = f.get("tokenizer.ggml.bos_token_id"), f.get("tokenizer.ggml.eos_token_id")
        if model == "llama":  # SentencePiece's ids where the file names none
            bos, eos = 1 if bos is None else bos, 2 if eos is None else eos
        eot = f.get("tokenizer.ggml.eot_token_id")
        return cls(
            tok,
            tokens,
            types,
            None if bos is None else int(bos),
            None if eos is None else int(eos),
            add_bos,
            add_eos,
            None if eot is None else int(eot),
            rstrip,
            space_prefix,
        )

    # ---- text -> tokens -----------------------------------------------------------

    def _fragments(self, text: str, parse_special: bool):
        """The text cut at its special tokens: (start, end, token id or None)
        in order, None for text to tokenize. llama.cpp's partition: each
        special token, longest first, splits every text fragment left so far."""
        fragments = [(0, len(text), None)]
        present = self._specials_in(text)
        for token_id in self._special:
            if token_id not in present:
                continue
            if not parse_special and self._types[token_id] != _USER_DEFINED:
                continue
            piece = self.tokens[token_id]
            out = []
            for start, end, kind in fragments:
                if kind is not None or piece not in text[start:end]:
                    out.append((start, end, kind))
                    continue
                at = start
                while (hit := text.find(piece, at, end)) >= 0:
                    if hit > at:
                        out.append((at, hit, None))
                    out.append((hit, hit + len(piece), token_id))
                    at = hit + len(piece)
                    if token_id in self._rstrip:
                        while at < end and text[at].isspace():
                            at += 1
                if at < end:
                    out.append((at, end, None))
            fragments = out
        return fragments

    def _specials_in(self, text: str) -> set[int]:
        """The special tokens that occur in text (a fragment is a piece of
        text, so no other can occur in one)."""
        present: set[int] = set()
        if self._special_start is None:
            return present
        for start in self._special_start.finditer(text):
            at = start.start()
            for length, table in self._special_by_length.items():
                found = table.get(text[at : at + length])
                if found is not None:
                    present.add(found)
        return present

    def encode_with_offsets(self, text: str, add_bos: bool | None = None, parse_special: bool = True):
        """(ids, spans): the tokens of text and, for each, the [start, end)
        of the characters it came from (BOS and EOS: an empty span at the
        start and the end)."""
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        bos, eos = self._ends(text, add_bos, parse_special)
        if bos:
            ids.append(self.bos_id)
            spans.append((0, 0))
        for start, end, token_id in self._fragments(text, parse_special):
            if token_id is not None:
                ids.append(token_id)
                spans.append((start, end))
                continue
            encoding = self._tok.encode(text[start:end], add_special_tokens=False)
            ids += encoding.ids
            spans += [(start + a, start + b) for a, b in encoding.offsets]
        if eos:
            ids.append(self.eos_id)
            spans.append((len(text), len(text)))
        return ids, spans

    def _ends(self, text: str, add_bos: bool | None, parse_special: bool) -> tuple[bool, bool]:
        """Whether BOS opens text's tokens and EOS closes them (encode's rule)."""
        if add_bos is None and parse_special and self.add_bos and text.startswith(self.tokens[self.bos_id]):
            add_bos = False  # a chat template wrote BOS already: one, not two
        bos = self.add_bos if add_bos is None else add_bos
        if bos and self.bos_id is None:
            raise InputError("the model takes no BOS token, yet one was asked for")
        return bos, self.add_eos and (add_bos is None or add_bos)

    def encode(self, text: str, add_bos: bool | None = None, parse_special: bool = True) -> list[int]:
        """The tokens of text; add_bos=None adds BOS (and EOS) as the GGUF
        says (BOS only where the text does not start with its text), False
        adds neither."""
        return self.encode_with_offsets(text, add_bos, parse_special)[0]

    def decode(self, ids) -> str:
        """The text of ids, special tokens written as their text."""
        parts, run = [], []
        for i in map(int, ids):
            if 0 <= i < self.vocab_size and self._types[i] in _SPECIAL_KINDS:
                if run:
                    parts.append(self._tok.decode(run, skip_special_tokens=False))
                    run = []
                parts.append(self.tokens[i])
            else:
                run.append(i)
        if run:
            parts.append(self._tok.decode(run, skip_special_tokens=False))
        return "".join(parts)

    def encode_corpus(self, text: str) -> np.ndarray:
        """A text file's tokens for training: documents split on blank lines
        would lose cross-document context, so the text is encoded whole,
        with one EOS at its end. (A corpus too large to hold is encoded in
        pieces that give these same tokens: corpus_opening, encode_pieces,
        corpus_closing; datasets/corpus.py.)"""
        ids = self.corpus_opening(text) + self.encode_pieces([text], continuing=False)[0]
        return np.asarray(ids + self.corpus_closing(text, ids[-1] if ids else None), dtype=np.int32)

    def corpus_opening(self, start: str) -> list[int]:
        """What encode_corpus puts before a text that starts with start: BOS or nothing."""
        return [self.bos_id] if self._ends(start, None, True)[0] else []

    def corpus_closing(self, start: str, last: int | None) -> list[int]:
        """What encode_corpus puts after a text that starts with start and
        whose last token is last: EOS where encode adds one, and one EOS
        closes every corpus."""
        ends = [self.eos_id] if self._ends(start, None, True)[1] else []
        if self.eos_id is not None and (ends[-1] if ends else last) != self.eos_id:
            ends.append(self.eos_id)
        return ends

    def encode_pieces(self, texts: list[str], continuing: bool) -> list[list[int]]:
        """The tokens of each text, no BOS or EOS, special tokens parsed, as
        encode gives them, the texts encoded together on every core (the
        tokenizers library's encode_batch). continuing: each text continues
        a text before it, so SentencePiece's space prefix does not open it
        (it still opens the text after each special token, as in llama.cpp)."""
        fragments: list[str] = []
        continued: list[str] = []
        layout = []  # per text: (token id) or (list, index into it) per fragment
        for text in texts:
            parts = []
            for n, (start, end, token_id) in enumerate(self._fragments(text, True)):
                if token_id is not None:
                    parts.append((None, token_id))
                elif continuing and n == 0 and self._space_prefix:
                    parts.append((continued, len(continued)))
                    continued.append(text[start:end])
                else:
                    parts.append((fragments, len(fragments)))
                    fragments.append(text[start:end])
            layout.append(parts)
        encoded = {id(fragments): self._encode_batch(self._tok, fragments)}
        if continued:
            encoded[id(continued)] = self._encode_batch(self._continuation_tokenizer(), continued)
        out = []
        for parts in layout:
            ids: list[int] = []
            for where, index in parts:
                if where is None:
                    ids.append(index)
                else:
                    ids += encoded[id(where)][index]
            out.append(ids)
        return out

    @staticmethod
    def _encode_batch(tok, texts: list[str]) -> list[list[int]]:
        # encode_batch_fast, where the tokenizers library has it: the same ids without the offsets
        encode = getattr(tok, "encode_batch_fast", tok.encode_batch)
        return [e.ids for e in encode(texts, add_special_tokens=False)] if texts else []

    def _continuation_tokenizer(self):
        """This tokenizer without SentencePiece's space prefix (made once)."""
        if self._continuation is None:
            from tokenizers import Tokenizer

            self._continuation = Tokenizer.from_str(self._tok.to_str())
            self._continuation.normalizer = _sentencepiece_normalizer(add_space_prefix=False)
        return self._continuation

    def fingerprint(self) -> str:
        """A digest of everything that decides this tokenizer's ids (with the
        tokenizers library's version): a token file made by another tokenizer
        is not mistaken for this one's."""
        import hashlib

        import tokenizers

        digest = hashlib.sha256(self._tok.to_str().encode())
        for part in (self.tokens, self._types, self.bos_id, self.eos_id, self.add_bos, self.add_eos):
            digest.update(repr(part).encode())
        digest.update(f"{sorted(self._rstrip)} {self._space_prefix} {tokenizers.__version__}".encode())
        return digest.hexdigest()


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
