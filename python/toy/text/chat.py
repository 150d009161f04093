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

    def render(self, messages, add_generation_prompt=False) -> str:
        """The conversation as the template prints it: InputError (one line)
        for a template that fails, loops or grows without bound on it."""
        return self.template.render(
            messages=messages, add_generation_prompt=add_generation_prompt, bos_token="", eos_token=""
        )

    def sample(self, messages) -> Sample:
        """The conversation's tokens, the assistant's turns marked as trained.

        The template renders the conversation up to each assistant turn (with
        the generation prompt) and through it; the difference is the turn's
        text. Each piece is tokenized on its own, so a turn's tokens are
        exactly what the model would generate after its prompt."""
        full = self.render(messages)
        pieces, cursor = [], 0  # (text, trained)
        for i, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            before = self.render(messages[:i], add_generation_prompt=True)
            through = self.render(messages[: i + 1])
            if not (through.startswith(before) and full.startswith(through) and len(before) >= cursor):
                raise InputError(
                    "the chat template renders a conversation's start differently "
                    "inside the whole conversation; cannot find where a response starts"
                )
            pieces += [(full[cursor : len(before)], False), (through[len(before) :], True)]
            cursor = len(through)
        pieces.append((full[cursor:], False))
        tokens, trained = [], []
        for text, is_trained in pieces:
            # BOS (where the model takes one) starts the conversation, not each piece
            ids = self.tokenizer.encode(text, add_bos=None if not tokens else False) if text else []
            tokens += ids
            trained += [is_trained] * len(ids)
        return Sample(np.asarray(tokens, dtype=np.int32), np.asarray(trained, dtype=bool))
