"""Conversations rendered with a model's own chat template and tokenized
with its tokenizer, the assistant's turns marked: a Sample, what instruct
and preference data are made of, and the prompt a chat sends."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ..core.errors import InputError
from ..formats.gguf_file import read_metadata
from ..native.families import family


@dataclass
class Sample:
    tokens: np.ndarray  # int32 [n], the whole conversation
    trained: np.ndarray  # bool [n]: True on the assistant's tokens, the ones that carry loss

    @classmethod
    def prompt_response(cls, tokens, n_prompt: int) -> Sample:
        """One prompt of n_prompt tokens, then the response."""
        tokens = np.asarray(tokens, dtype=np.int32)
        return cls(tokens, np.arange(len(tokens)) >= n_prompt)

    def last_response_start(self) -> int:
        """Where the final assistant turn begins."""
        untrained = np.flatnonzero(~self.trained)
        return int(untrained[-1]) + 1 if untrained.size else 0


class Conversation(list):
    """A conversation's messages (it is their list) and the tools its
    assistant may call (function schemas, as transformers takes them; None
    where there are none)."""

    def __init__(self, messages=(), tools=None):
        super().__init__(messages)
        self.tools = tools


class ChatFormatter:
    """Renders conversations with a GGUF's tokenizer.chat_template (Jinja),
    in chat_template's guarded sandbox: the template is hostile input."""

    def __init__(self, template: str, tokenizer):
        from ..text.chat_template import ChatTemplate

        self.template = ChatTemplate(template)  # InputError if it does not parse
        self.tokenizer = tokenizer

    @classmethod
    def from_gguf(cls, path, tokenizer) -> ChatFormatter:
        """The GGUF's chat template; for a GGUF without one, its family's
        default where the family table has one (Gemma 3's base models ship
        none: Gemma's turn format)."""
        meta = read_metadata(path)
        template = meta.get("tokenizer.chat_template")
        entry = family(meta.get("general.architecture"))
        if template is None and entry is not None and entry.default_chat_template is not None:
            print(
                f"toy: {path} has no chat template; using the {entry.gguf_arch} family's default chat template",
                file=sys.stderr,
            )
            template = entry.default_chat_template
        if template is None:
            raise InputError(f"{path} has no tokenizer.chat_template: instruct needs a chat model")
        if not isinstance(template, str):
            raise InputError(f"{path}: tokenizer.chat_template is not a string")
        return cls(template, tokenizer)

    def render(self, messages, add_generation_prompt=False, tools=None) -> str:
        """The conversation as the template prints it, with the tokenizer's
        real BOS and EOS text (a template that closes an answer with
        {{ eos_token }} writes EOS): InputError (one line) for a template
        that fails, loops or grows without bound on it."""
        extra = {} if tools is None else {"tools": tools}
        return self.template.render(
            messages=messages,
            add_generation_prompt=add_generation_prompt,
            bos_token=self._token_text(self.tokenizer.bos_id),
            eos_token=self._token_text(self.tokenizer.eos_id),
            **extra,
        )

    def _token_text(self, token_id) -> str:
        tokens = getattr(self.tokenizer, "tokens", None)
        return "" if token_id is None or tokens is None else tokens[token_id]

    def sample(self, messages, tools=None) -> Sample:
        """The conversation's tokens, the assistant's turns marked as trained.

        The conversation is rendered once and tokenized once, so the tokens
        are the ones llama.cpp sees when it runs the rendered text. Where each
        answer lies in the text comes from two more renders: up to the answer
        (with the generation prompt) and through it; the characters between
        are the answer and whatever the template closes it with (an
        end-of-turn token, EOS), which the model must learn to write. A token
        is trained when its text starts inside an answer. A tool's results
        (role "tool") are not an answer and are not trained; an assistant's
        tool calls are. tools: the conversation's own (Conversation.tools)
        unless given."""
        if tools is None:
            tools = getattr(messages, "tools", None)
        full = self.render(messages, tools=tools)
        answers, cursor = [], 0  # [start, end) of each answer in full
        for i, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            before = self.render(messages[:i], add_generation_prompt=True, tools=tools)
            through = self.render(messages[: i + 1], tools=tools)
            if not (through.startswith(before) and full.startswith(through) and len(before) >= cursor):
                raise InputError(
                    "the chat template renders a conversation's start differently "
                    "inside the whole conversation; cannot find where a response starts"
                )
            answers.append((len(before), len(through)))
            cursor = len(through)
        ids, spans = self.tokenizer.encode_with_offsets(full)
        starts = np.asarray([start if end > start else -1 for start, end in spans], dtype=np.int64)
        trained = np.zeros(len(ids), dtype=bool)
        for start, end in answers:
            trained |= (starts >= start) & (starts < end)
        return Sample(np.asarray(ids, dtype=np.int32), trained)
