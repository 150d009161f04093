"""Picking the next token from the logits: llama.cpp's sampler chain."""

from __future__ import annotations

import numpy as np


class Sampler:
    """llama.cpp's sampler chain, in its order: the repeat penalty over the
    last repeat_last_n tokens (prompt included), top-k, top-p, min-p (these
    three on the probabilities at temperature 1), then temperature and a
    seeded draw. Temperature 0 is greedy: the likeliest token after the
    penalty."""

    def __init__(
        self,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        min_p: float = 0.0,
        repeat_penalty: float = 1.0,
        repeat_last_n: int = 64,
        seed: int = 0,
    ):
        self.temperature, self.top_k, self.top_p, self.min_p = temperature, top_k, top_p, min_p
        self.repeat_penalty, self.repeat_last_n = repeat_penalty, repeat_last_n
        self.rng = np.random.default_rng(seed)

    def penalize(self, logits: np.ndarray, history) -> np.ndarray:
        """logits with every token seen in the window made less likely:
        positive logits divided by the penalty, negative ones multiplied."""
        n = self.repeat_last_n
        if self.repeat_penalty == 1.0 or n == 0 or not len(history):
            return logits
        window = history if n < 0 else history[-n:]
        seen = np.unique(np.asarray(window, dtype=np.int64))
        seen = seen[(seen >= 0) & (seen < logits.size)]
        logits = logits.copy()
        values = logits[seen]
        logits[seen] = np.where(values <= 0, values * self.repeat_penalty, values / self.repeat_penalty)
        return logits

    def pick(self, logits: np.ndarray, history=()) -> int:
        logits = self.penalize(logits, history)
        if self.temperature <= 0:
            return int(np.argmax(logits))
        raw = logits.astype(np.float64)
        # shifted first: a temperature near 0 takes the others to -inf, the likeliest stays at 0
        with np.errstate(over="ignore"):
            logits = (raw - raw.max()) / self.temperature
        if 0 < self.top_k < logits.size:
            cutoff = np.partition(logits, -self.top_k)[-self.top_k]
            logits = np.where(logits >= cutoff, logits, -np.inf)
        if self.top_p < 1.0 or self.min_p > 0.0:
            kept = self._nucleus(np.where(np.isfinite(logits), raw, -np.inf))
            logits = np.where(kept, logits, -np.inf)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        return int(self.rng.choice(logits.size, p=probs))

    def _nucleus(self, raw: np.ndarray) -> np.ndarray:
        """Which tokens top-p and min-p keep, from the logits at temperature 1
        (-inf where top-k dropped the token); the likeliest is always kept."""
        probs = np.exp(raw - raw.max())
        probs /= probs.sum()
        kept = np.isfinite(raw)
        if self.top_p < 1.0:
            order = np.argsort(-probs, kind="stable")
            # the fewest likeliest tokens whose probabilities add up to top_p
            last = int(np.searchsorted(np.cumsum(probs[order]), self.top_p))
            nucleus = np.zeros_like(kept)
            nucleus[order[: min(last, probs.size - 1) + 1]] = True
            kept &= nucleus
        if self.min_p > 0.0:
            kept &= probs >= self.min_p * probs.max()
        kept[int(np.argmax(probs))] = True
        return kept


SAMPLING_DEFAULTS = dict(temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0, repeat_last_n=64, seed=0)
