"""Noticing a run that diverges, and saying so in one line with what to try:
a learning rate too high for the model makes the loss climb (or turn nan)
while the run goes on to its end as if nothing happened."""

from __future__ import annotations

import math
import sys

SMOOTHING = 0.9  # the loss's moving average: a batch's noise is not a trend
WARMUP_STEPS = 10  # the first steps' average is too young to judge
RISE = 1.0  # nats above the lowest average seen ...
ABOVE_START = 1.25  # ... and this far above where the run started


class DivergenceWatch:
    """Feed it each step's loss; it prints one hint on stderr the first time
    the smoothed loss climbs well above both its lowest point and the start
    (or the loss is not finite), and keeps quiet after that."""

    def __init__(self, lr: float, flag: str = "--lr", out=None):
        self.lr, self.flag, self.out = lr, flag, out
        self.average = self.start = self.lowest = None
        self.steps, self.warned = 0, False

    def see(self, step: int, loss: float) -> str | None:
        """The hint printed at this step, if any."""
        if self.warned:
            return None
        if not math.isfinite(loss):
            return self._warn(f"the loss is {loss} at step {step}")
        self.steps += 1
        self.average = loss if self.average is None else SMOOTHING * self.average + (1 - SMOOTHING) * loss
        if self.start is None:
            self.start = loss
        self.lowest = self.average if self.lowest is None else min(self.lowest, self.average)
        if self.steps < WARMUP_STEPS:
            return None
        if self.average > self.lowest + RISE and self.average > ABOVE_START * self.start:
            return self._warn(
                f"the loss is climbing (about {self.average:.2f} by step {step}, {self.start:.2f} at the start)"
            )
        return None

    def _warn(self, what: str) -> str:
        self.warned = True
        hint = (
            f"toy-train: {what}: the run is diverging; the learning rate ({self.lr:g}) is likely "
            f"too high for this model: try {self.flag} {self.lr / 4:g}"
        )
        print(hint, file=self.out or sys.stderr)
        return hint
