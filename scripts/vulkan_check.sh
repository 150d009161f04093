#!/usr/bin/env bash
# The Vulkan backend on Mesa's lavapipe (a software Vulkan device: the shaders
# run on the CPU): build libtinynn_vulkan into the active environment, then
# `pytest -m vulkan` (tests/test_devices.py: every recipe against the CPU, the
# golden logs, transfers per step, generation, the refusals; the recurrent
# operations against their float64 references and each recurrent family's
# LoRA and decoding against the CPU).
#
#   bash scripts/vulkan_check.sh        (in .ci/run, after the CPU tests)
#
# Installs the Debian packages it needs with apt-get when missing (as root),
# and says so and stops where it cannot. The build replaces the active
# environment's toy with one holding both libtinynn_cpu and libtinynn_vulkan.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libvulkan-dev glslc spirv-headers mesa-vulkan-drivers)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
        echo "vulkan_check: skipped: needs ${missing[*]} (apt-get as root)" >&2
        exit 0
    fi
    apt-get update -q >/dev/null
    apt-get install -y -q "${missing[@]}" >/dev/null
fi

# In the build folder the CPU install used (pyproject's build-dir): ggml-cpu
# and the tinynn core are built already, and only ggml-vulkan, its shaders and
# libtinynn_vulkan are compiled (a plain `pip install .` afterwards relinks the
# CPU build in about half a minute).
start=$(date +%s)
TOY_VULKAN=ON pip install -q --no-deps .
built=$(date +%s)
build_dir="$(ls -td build/py3-none-*/ | head -n 1)"
echo "vulkan_check: built libtinynn_vulkan (and relinked libtinynn_cpu) in $((built - start)) s" >&2
# the shaders' share, from ninja's log: each shader source's last compile (all
# its SPIR-V variants), wall time from the first start to the last end
NINJA_LOG="$build_dir.ninja_log" python3 - <<'PY' >&2
import os
last = {}
for line in open(os.environ["NINJA_LOG"]).read().splitlines()[1:]:
    start, end, _, output, _ = line.split("\t")
    if output.endswith(".comp.cpp"):       # ninja logs each one by relative and absolute path
        last[output.rsplit("/", 1)[-1]] = (int(start), int(end))
if last:
    wall = (max(e for _, e in last.values()) - min(s for s, _ in last.values())) / 1000
    busy = sum(e - s for s, e in last.values()) / 1000
    print(f"vulkan_check: {len(last)} shader sources compiled by glslc in {wall:.0f} s "
          f"({busy:.0f} s of compile jobs side by side)")
PY
toy-train --version | grep '^vulkan:' >&2

python -m pytest -q -m vulkan tests/test_devices.py tests/test_backend_packages.py tests/test_recurrent_ops.py \
    tests/test_lfm2.py tests/test_qwen35.py tests/test_granitehybrid.py tests/test_nemotron_h.py tests/test_falcon_h1.py \
    tests/test_qwen3moe.py tests/test_mistral3.py
echo "vulkan_check: the Vulkan tests took $(( $(date +%s) - built )) s" >&2
