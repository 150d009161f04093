"""The learning-rate schedule and the AdamW row, against hand-computed values."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

import toy
from toy.training.loop import learning_rate


def args(**kw):
    base = dict(lr=1e-3, warmup=0, min_lr=None, steps=100)
    return SimpleNamespace(**{**base, **kw})


def test_constant_by_default():
    assert [learning_rate(s, args()) for s in (1, 50, 100)] == [1e-3] * 3


def test_linear_warmup_then_cosine_to_min_lr():
    a = args(warmup=10, min_lr=1e-4)
    assert learning_rate(1, a) == pytest.approx(1e-4)  # 1/10 of the peak
    assert learning_rate(10, a) == pytest.approx(1e-3)  # the peak
    # halfway through the decay: the midpoint of peak and floor
    assert learning_rate(55, a) == pytest.approx(1e-4 + 0.5 * 9e-4 * (1 + math.cos(math.pi * 0.5)))
    assert learning_rate(100, a) == pytest.approx(1e-4)  # the floor at the last step


def test_adamw_row_has_the_bias_corrections_of_step_t():
    row = toy.adamw_hp(3, lr=0.01, beta1=0.8, beta2=0.9, eps=1e-6, weight_decay=0.1)
    np.testing.assert_allclose(row, [0.01, 0.8, 0.9, 1e-6, 0.1, 1 / (1 - 0.8**3), 1 / (1 - 0.9**3)], rtol=1e-6)
    with pytest.raises(ValueError):
        toy.adamw_hp(0, 0.01)
