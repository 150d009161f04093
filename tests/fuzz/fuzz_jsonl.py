"""Instruct data as fuzz input: the JSONL file `toy-train instruct --data`
reads, as a downloaded data set may hold it -- other encodings (UTF-16,
Latin-1, a byte-order mark, invalid UTF-8), CRLF line ends and line
separators inside strings, deep nesting, huge lines, control characters,
lone surrogates, every key missing or of the wrong type, conversations whose
roles are out of order or empty, and bytes cut or flipped.

Each case trains one step of LoRA on a tiny llama GGUF with a ChatML
template (written once per worker): a file that parses trains, anything
else is refused in one line naming the file's line.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures

import reference_llama as ref  # noqa: E402
from gguf_fixtures import tiny_tokenizer, write_llama_gguf  # noqa: E402

NAME = "jsonl"

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_model: Path | None = None


def model() -> Path:
    """A tiny chat model, written once per worker process."""
    global _model
    if _model is None:
        folder = Path(tempfile.mkdtemp(prefix="toy-fuzz-jsonl-model-"))
        cfg = ref.Config(vocab=300, d_model=32, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=64, untied=True)
        params = ref.init_params(cfg, np.random.default_rng(0), scale=0.3)
        _model = write_llama_gguf(
            folder / "chat.gguf", params, cfg, tokenizer=tiny_tokenizer(300), chat_template=CHATML
        )
    return _model


TEXTS = [
    "2+2?",
    "4",
    "",
    " ",
    "héllo wörld",
    "日本語のテキスト",
    "emoji 🦙🦙",
    "tab\there",
    "nul\x00byte",
    "bell\x07",
    "line\nbreak",
    "cr\rcarriage",
    "sep\u2028para\u2029",
    "bom\ufeffinside",
    "rtl \u202e",
    "x" * 5000,
    "{{ messages }}",
    "{% raw %}",
    "<|im_start|>",
    "<|end|>",
    "\\u0000",
]
ROLES = ["user", "assistant", "system", "tool", "", "USER", "model", "ässistant", "x" * 300]


def text(rng) -> str:
    return rng.choice(TEXTS)


def value(rng, depth=0):
    """Any JSON value, usually of the wrong type for where it goes."""
    makers = [
        lambda: None,
        lambda: True,
        lambda: rng.choice([0, -1, 1e308, 2**70]),
        lambda: text(rng),
        lambda: rng.choice([1.5, -0.0]),
    ]
    if depth < 3:
        makers += [
            lambda: [value(rng, depth + 1) for _ in range(rng.randrange(3))],
            lambda: {text(rng): value(rng, depth + 1) for _ in range(rng.randrange(3))},
            lambda: {"role": rng.choice(ROLES), "content": value(rng, depth + 1)},
        ]
    return rng.choice(makers)()


def conversation(rng) -> dict:
    roll = rng.random()
    if roll < 0.35:
        return {"prompt": text(rng), "response": text(rng)}
    if roll < 0.7:
        turns = [
            {"role": rng.choice(["system", "user", "assistant"] if rng.random() < 0.8 else ROLES), "content": text(rng)}
            for _ in range(rng.randint(0, 5))
        ]
        if turns and rng.random() < 0.7:
            turns[-1]["role"] = "assistant"
        return {"messages": turns}
    # the right keys, values of any type; or keys missing, misnamed, extra
    obj = {
        rng.choice(["prompt", "response", "messages", "completion", "Prompt", "text", ""]): value(rng)
        for _ in range(rng.randint(0, 3))
    }
    if rng.random() < 0.5:
        obj.update({"prompt": text(rng), "response": value(rng)})
    return obj


def valid_conversation(rng) -> dict:
    """A conversation of the documented shapes, its text anything."""
    if rng.random() < 0.5:
        return {"prompt": text(rng), "response": text(rng)}
    turns = [
        {"role": rng.choice(["system", "user", "assistant"]), "content": text(rng)} for _ in range(rng.randint(0, 4))
    ]
    return {"messages": turns + [{"role": "assistant", "content": text(rng)}]}


def line(rng) -> str:
    roll = rng.random()
    if roll < 0.75:
        return json.dumps(conversation(rng), ensure_ascii=rng.random() < 0.5)
    if roll < 0.80:
        depth = rng.choice([10, 900, 1000, 5000, 100_000])
        return "[" * depth + "]" * depth
    if roll < 0.84:
        depth = rng.choice([50, 2000, 50_000])
        return '{"prompt": "p", "response": "r", "x": ' + '{"a": ' * depth + "1" + "}" * depth + "}"
    if roll < 0.88:
        return json.dumps({"prompt": "p", "response": "r" * rng.choice([10**5, 10**6])})
    if roll < 0.92:  # escapes JSON allows and text does not hold
        return (
            '{"prompt": "\\ud800", "response": "x"}'
            if rng.random() < 0.5
            else '{"prompt": "a", "response": "\\udfff\\ud83e"}'
        )
    if roll < 0.96:
        return rng.choice(
            [
                "",
                "   ",
                "\t",
                "null",
                "[]",
                "{}",
                "1",
                '"text"',
                "{",
                '{"prompt": "a",}',
                "NaN",
                '{"prompt": NaN, "response": Infinity}',
                "\x00" * 10,
            ]
        )
    return "".join(chr(rng.randrange(0x20, 0x250)) for _ in range(rng.randrange(40)))


def encode(rng, lines: list[str]) -> bytes:
    """The lines joined and written as a downloaded file might be."""
    joined = ("\r\n" if rng.random() < 0.15 else "\n").join(lines)
    if rng.random() < 0.5:
        joined += "\n"
    roll = rng.random()
    if roll < 0.75:
        data = joined.encode("utf-8", errors="surrogatepass")
    elif roll < 0.82:
        data = b"\xef\xbb\xbf" + joined.encode("utf-8", errors="surrogatepass")
    elif roll < 0.88:
        data = joined.encode("utf-16", errors="surrogatepass")
    else:
        data = joined.encode("latin-1", errors="replace")
    if data and rng.random() < 0.15:  # damage: cut, flipped bytes, junk
        data = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            data[at] = rng.randrange(256)
        if rng.random() < 0.5:
            data = data[: rng.randrange(len(data))]
        data = bytes(data)
    return data


def make_case(rng, workdir):
    # a third of the files hold valid conversations only, so that many cases train
    valid = rng.random() < 0.33
    lines = [json.dumps(valid_conversation(rng)) if valid else line(rng) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.6:  # a valid line somewhere, so that some files train
        lines.insert(rng.randrange(len(lines) + 1), json.dumps({"prompt": "Hi", "response": "Hello!"}))
    data = workdir / "data.jsonl"
    data.write_bytes(encode(rng, lines))
    argv = [
        "instruct",
        "--model",
        str(model()),
        "--data",
        str(data),
        "--steps",
        "1",
        "--seq",
        rng.choice(["8", "32", "64"]),
        "--batch",
        "1",
        "--threads",
        "1",
        "--out",
        str(workdir / "run"),
    ]
    if rng.random() < 0.3:
        argv += ["--eval-split", rng.choice(["0.5", "0.9"])]
    return "toy-train", argv
