"""Renders every chat template in llama.cpp's models/templates with Hugging
Face transformers, into the goldens tests/test_chat_templates.py holds toy's
renderer to (tests/data/templates/<template>.json):

  TOY_LLAMA_CPP_MODELS=.../llama.cpp/models PYTHONPATH=python \\
      python scripts/render_template_goldens.py

Each template renders CASES (a chat, its prompt, a tool call and its result,
the same with the call's content null, a reasoning turn) with fixed special
tokens, strftime_now's time fixed at toy's STRFTIME_NOW. Where transformers raises (a template that allows no system
turn, or no tools), the golden keeps the error and the case is tried again
without its system message.

tests/test_chat_templates.py imports this file for CASES and
render_with_transformers (its live test); transformers is imported only
when rendering.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = ROOT / "tests" / "data" / "templates"

# the special tokens a tokenizer would pass (apply_chat_template passes its own)
VARIABLES = {"bos_token": "<s>", "eos_token": "</s>"}

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
CHAT = [
    SYSTEM,
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Italy?"},
    {"role": "assistant", "content": "Rome."},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city's name"}},
                "required": ["city"],
            },
        },
    }
]
CALL = {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
TOOL_CALL = [
    SYSTEM,
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {
        "role": "tool",
        "tool_call_id": "call12345",
        "name": "get_weather",
        "content": '{"temperature": 22, "sky": "sunny"}',
    },
    {"role": "assistant", "content": "It is 22 °C and sunny in Paris."},
]
# the call's content as OpenAI's API sends it, null: apply_chat_template drops
# the key (a template that needs it fails)
TOOL_CALL_NULL_CONTENT = [
    {"role": "assistant", "content": None, "tool_calls": [CALL]} if "tool_calls" in m else m for m in TOOL_CALL
]
REASONING = [
    SYSTEM,
    {"role": "user", "content": "What is 2 + 2?"},
    {"role": "assistant", "reasoning_content": "Two plus two makes four.", "content": "4", "tool_calls": None},
]

# name: (messages, tools, add_generation_prompt)
CASES = {
    "chat": (CHAT, None, False),
    "prompt": (CHAT[:-1], None, True),
    "tools": (TOOL_CALL, TOOLS, False),
    "tools_null_content": (TOOL_CALL_NULL_CONTENT, TOOLS, False),
    "reasoning": (REASONING, None, False),
}


def templates_dir() -> Path:
    models = os.environ.get("TOY_LLAMA_CPP_MODELS")
    if not models:
        sys.exit("set TOY_LLAMA_CPP_MODELS to llama.cpp's models folder (it holds templates/*.jinja)")
    return Path(models) / "templates"


def without_system(messages: list) -> list:
    return [m for m in messages if m["role"] != "system"]


def attempts(case: str) -> list[tuple[bool, list]]:
    """(with a system message, messages): the case as it is, then without
    its system message (tried where the first raises)."""
    messages = CASES[case][0]
    return [(True, messages), (False, without_system(messages))]


def describe(err: BaseException) -> str:
    return f"{type(err).__name__}: {' '.join(str(err).split())}"


def render_with_transformers(source: str, messages: list, tools, add_generation_prompt: bool) -> str:
    """The template's text as apply_chat_template renders it (without a
    tokenizer: its normalizing of messages, then render_jinja_template),
    strftime_now at toy's STRFTIME_NOW."""
    from transformers.utils import chat_template_utils as ctu

    from toy.text.chat_template import STRFTIME_NOW

    class FixedClock(datetime):
        @classmethod
        def now(cls, tz=None):
            return STRFTIME_NOW

    normalize = getattr(ctu, "_normalize_chat_messages", lambda conversation: conversation)
    with mock.patch.object(ctu, "datetime", FixedClock):
        rendered, _ = ctu.render_jinja_template(
            conversations=[normalize(messages)],
            tools=tools,
            chat_template=source,
            add_generation_prompt=add_generation_prompt,
            **VARIABLES,
        )
    return rendered[0]


def golden(source: str) -> dict:
    """What transformers renders of each case: a list of attempts, each
    {"system": bool, "text": ...} or {"system": bool, "error": ...}."""
    from toy.text.chat_template import STRFTIME_NOW

    cases = {}
    for case, (_, tools, add_generation_prompt) in CASES.items():
        tried = []
        for system, messages in attempts(case):
            try:
                tried.append(
                    {"system": system, "text": render_with_transformers(source, messages, tools, add_generation_prompt)}
                )
                break
            except Exception as err:  # noqa: BLE001 (the template's error is the golden)
                tried.append({"system": system, "error": describe(err)})
        cases[case] = tried
    return {
        "sha256": hashlib.sha256(source.encode()).hexdigest(),
        "strftime_now": STRFTIME_NOW.isoformat(),
        "cases": cases,
    }


def main() -> None:
    import transformers

    folder = templates_dir()
    GOLDENS.mkdir(parents=True, exist_ok=True)
    for old in GOLDENS.glob("*.json"):
        old.unlink()
    paths = sorted(folder.glob("*.jinja"))
    rendered = 0
    for path in paths:
        result = golden(path.read_text(encoding="utf-8"))
        result["transformers"] = transformers.__version__
        rendered += all("text" in tried[-1] for tried in result["cases"].values())
        text = json.dumps(result, ensure_ascii=False, indent=1) + "\n"
        (GOLDENS / f"{path.stem}.json").write_text(text, encoding="utf-8")
    print(f"{len(paths)} templates, {rendered} render every case (transformers {transformers.__version__})")


if __name__ == "__main__":
    main()
