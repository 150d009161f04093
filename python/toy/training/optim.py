"""The AdamW hyper-parameter row the training graph reads each step."""

from __future__ import annotations

import numpy as np


def adamw_hp(
    step: int, lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.0
) -> np.ndarray:
    """The 7-float row for ggml's AdamW at 1-based step `step`.

    Layout: lr, beta1, beta2, eps, weight_decay, 1/(1-beta1^t), 1/(1-beta2^t):
    the last two are Adam's bias corrections, computed here so that the
    learning-rate schedule and the step count live in Python.
    """
    if step < 1:
        raise ValueError(f"step is 1-based, got {step}")
    return np.array(
        [lr, beta1, beta2, eps, weight_decay, 1.0 / (1.0 - beta1**step), 1.0 / (1.0 - beta2**step)],
        dtype=np.float32,
    )
