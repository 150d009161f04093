"""DPO and ORPO in float64 numpy, from their formulas, for the tests: each
takes the logits (B, T, V) of a batch whose rows 2k, 2k+1 are pair k (chosen,
rejected) and labels (B, T) (-1: no loss), and returns the loss and its
gradient with respect to the logits."""

import numpy as np


def log_softmax(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def row_logps(logits, labels):
    """Each row's summed log-probability of its labelled tokens, (B,)."""
    labelled = labels >= 0
    picked = np.take_along_axis(log_softmax(logits), np.where(labelled, labels, 0)[..., None], axis=-1)[..., 0]
    return np.where(labelled, picked, 0.0).sum(axis=1)


def _logits_gradient(logits, labels, dloss_dlp):
    """d loss / d logits from d loss / d (each row's summed log-probability)."""
    labelled = labels >= 0
    onehot = np.zeros_like(logits)
    np.put_along_axis(onehot, np.where(labelled, labels, 0)[..., None], 1.0, axis=-1)
    dlp_dz = (onehot - np.exp(log_softmax(logits))) * labelled[..., None]
    return dloss_dlp[:, None, None] * dlp_dz


def _real_pairs(labels):
    counts = (labels >= 0).sum(axis=1)
    return (counts[0::2] > 0) & (counts[1::2] > 0), counts


def _softplus(x):
    return np.logaddexp(0.0, x)


def _sigmoid(x):
    return 0.5 * (1 + np.tanh(x / 2))


def dpo(logits, labels, reference, beta):
    lp = row_logps(logits, labels)
    real, _ = _real_pairs(labels)
    k = real.sum()
    h = beta * ((lp[0::2] - reference[0::2]) - (lp[1::2] - reference[1::2]))
    loss = (_softplus(-h) * real).sum() / k
    dl_dh = -_sigmoid(-h) * real / k
    dl_dlp = np.zeros_like(lp)
    dl_dlp[0::2], dl_dlp[1::2] = beta * dl_dh, -beta * dl_dh
    return loss, _logits_gradient(logits, labels, dl_dlp)


def orpo(logits, labels, beta):
    lp = row_logps(logits, labels)
    real, counts = _real_pairs(labels)
    real = real.astype(np.float64)
    k, chosen_tokens = real.sum(), (counts[0::2] * real).sum()
    m = np.minimum(lp / np.maximum(counts, 1), -1e-7)  # as tinynn: a certain answer's odds are finite
    odds = m - np.log(-np.expm1(m))
    a = odds[0::2] - odds[1::2]
    loss = -(lp[0::2] * real).sum() / chosen_tokens + beta * (_softplus(-a) * real).sum() / k
    dl_da = -beta * _sigmoid(-a) * real / k
    dodds_dlp = 1 / (-np.expm1(m)) / np.maximum(counts, 1)
    dl_dlp = np.zeros_like(lp)
    dl_dlp[0::2] = -real / chosen_tokens + dl_da * dodds_dlp[0::2]
    dl_dlp[1::2] = -dl_da * dodds_dlp[1::2]
    return loss, _logits_gradient(logits, labels, dl_dlp)
