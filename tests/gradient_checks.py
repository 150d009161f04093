"""The check the reference tests share: every gradient tinynn computed
against a numpy reference's, to a tolerance relative to the largest entry."""

import numpy as np


def assert_every_gradient_matches(session, grads_ref):
    assert set(grads_ref) == set(session.params())
    for name, handle in session.params().items():
        grad = session.download(session.grad_of(handle))
        scale = np.abs(grads_ref[name]).max()
        np.testing.assert_allclose(
            grad, grads_ref[name], rtol=0, atol=1e-4 * scale + 1e-7, err_msg=f"gradient of {name}"
        )
