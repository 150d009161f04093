"""What toy asks pip for: each runtime dependency's lower bound is the version
CI installs and tests (.ci/lowest-constraints.txt, scripts/lowest_check.sh),
and no extra asks for a package that no index has."""

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def release(version: str) -> tuple[int, ...]:
    """1.24.0 and 1.24 alike (pip reads ">=2" as 2.0.0)."""
    numbers = [int(part) for part in version.split(".")]
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def test_every_lower_bound_is_the_version_ci_tests():
    bounds = {}
    for requirement in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["data"]:
        name, lowest = re.match(r"([\w-]+)>=([\w.]+)", requirement).groups()
        bounds[name.lower()] = lowest
    lines = (ROOT / ".ci" / "lowest-constraints.txt").read_text().splitlines()
    pins = dict(line.split("==") for line in lines if line and not line.startswith("#"))
    assert set(pins) == set(bounds), "the constraints and pyproject.toml's dependencies (and data extra) differ"
    for name, lowest in bounds.items():
        assert release(pins[name]) == release(lowest), f"{name}: pinned {pins[name]}, declared >={lowest}"


def test_no_extra_asks_for_the_unpublished_backend_packages():
    extras = PROJECT["optional-dependencies"]
    assert "cuda" not in extras and "vulkan" not in extras
    wanted = " ".join(" ".join(packages) for packages in extras.values())
    assert "toy-cuda" not in wanted and "toy-vulkan" not in wanted
    assert "scikit-learn" not in " ".join(extras["vision"])  # the digits ship with toy
