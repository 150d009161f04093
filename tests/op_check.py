"""tnn_op_check from Python: one ggml operation forward and backward on a
backend, the loss sum(out * dy), for the tests that hold an operation toy
gave a backward against a float64 reference (test_recurrent_ops.py,
test_experts.py)."""

from __future__ import annotations

import numpy as np

from toy.native.library import ffi
from toy.native.session import Session


def op_check(device: str, op: str, inputs: list[np.ndarray], dy: np.ndarray, threads: int = 2):
    """op's output and every input's gradient from tnn_op_check, in float64."""
    session = Session(device, threads=threads)
    lib = session.lib
    arrays = [np.ascontiguousarray(a, dtype=np.float32) for a in inputs]
    shapes = np.ones((len(arrays), 4), dtype=np.int64)
    for row, a in zip(shapes, arrays):
        row[: a.ndim] = a.shape[::-1]  # ggml's order
    out = np.zeros(dy.shape, dtype=np.float32)
    grads = [np.zeros_like(a) for a in arrays]
    keep = [ffi.from_buffer("float[]", a) for a in arrays]
    grad_ptrs = [ffi.from_buffer("float[]", g) for g in grads]
    status = lib.tnn_op_check(
        session._session,
        op.encode(),
        ffi.from_buffer("int64_t[]", shapes),
        len(arrays),
        ffi.new("const float *[]", keep),
        ffi.from_buffer("float[]", np.ascontiguousarray(dy, dtype=np.float32)),
        ffi.from_buffer("float[]", out),
        ffi.new("float *[]", grad_ptrs),
    )
    message = ffi.string(lib.tnn_last_error()).decode()
    return status, message, out.astype(np.float64), [g.astype(np.float64) for g in grads]
