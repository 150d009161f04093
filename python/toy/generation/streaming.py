"""The generated text handed out as it is produced (toy-generate's output,
generate's on_text)."""

from __future__ import annotations

from collections.abc import Callable


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
            piece, self.sent = text[len(self.sent) :], text
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
