"""A conversation of several turns with a model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..core import bounds
from ..core.errors import InputError
from .generate import DEFAULT_NEW_TOKENS, check_options, generate_ids
from .model import chat_formatter_of, context_of, encode, load_model, tokenizer_of
from .sampling import SAMPLING_DEFAULTS


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

    def __init__(
        self,
        model,
        system: str | None = None,
        ctx_size: int = 0,
        tokenizer=None,
        on_drop: Callable[[], object] | None = None,
    ):
        bounds.check("ctx_size", ctx_size)
        self.on_drop = on_drop
        self.model = load_model(model) if isinstance(model, (str, Path)) else model
        self.tokenizer = tokenizer or tokenizer_of(self.model)
        self.formatter = chat_formatter_of(self.model, self.tokenizer)
        self.system, self.ctx_size = system, ctx_size
        self.context = context_of(self.model, ctx_size)
        self.turns: list[dict] = []  # user, assistant, user, assistant ...
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
            if self.context is None or not self.turns or len(encode(self.tokenizer, text)) + room <= self.context:
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
                check_fits(
                    kv_cache_bytes(session.token_config, self.context),
                    f"a chat's KV cache of {self.context:,} positions",
                    "give a smaller -c/--ctx-size",
                )
            session.kv_init(self.context)
        if session.n_ctx and (self.context is None or session.n_ctx < self.context):
            self.context = session.n_ctx  # a cache made before the chat: the turns must fit it

    def say(
        self, user: str, max_new_tokens: int | None = None, on_text=None, stop: tuple[str, ...] = (), **options
    ) -> str:
        """The model's answer to user, kept in the conversation; max_new_tokens,
        on_text, stop and the sampling options (temperature, top_k, top_p,
        min_p, repeat_penalty, repeat_last_n, seed) as generate() takes them."""
        unknown = sorted(set(options) - set(SAMPLING_DEFAULTS))
        if unknown:
            raise TypeError(f"Chat.say() got an unexpected keyword argument {unknown[0]!r}")
        sampling = {**SAMPLING_DEFAULTS, **options}
        check_options(max_new_tokens, self.ctx_size, sampling)
        if not user:
            raise InputError("an empty message")
        self._make_cache()
        prompt = self.prompt_for(user, DEFAULT_NEW_TOKENS if max_new_tokens is None else max_new_tokens)
        answer = generate_ids(
            self.model,
            self.tokenizer,
            encode(self.tokenizer, prompt),
            max_new_tokens,
            stop,
            on_text,
            self.ctx_size,
            reuse_cache=True,
            **sampling,
        )
        self.turns += [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]
        return answer
