#!/usr/bin/env bash
# The CPU-level sitting of docs/benchmarks.md (cpu_levels), in one go:
#
#   bash benchmarks/cpu_levels.sh PORTABLE_PYTHON
#
# PORTABLE_PYTHON: the python of a venv holding a portable install of toy
# (TOY_PORTABLE=ON pip install ., or the wheel), whose ggml code also runs at
# the level it is held to; the native build measured is the toy of the
# python on PATH, with torch, transformers and peft installed. Run it on an
# idle machine: on 2 cores any other busy process slows a step several-fold.
set -u
portable="${1:?usage: bash benchmarks/cpu_levels.sh PORTABLE_PYTHON}"
cd "$(dirname "$0")/.."
echo "### $(date -u) $(lscpu | grep 'Model name' | tr -s ' ')"
uptime
echo "### LoRA, native level, vs PEFT f32 and bf16 autocast"
python benchmarks/bench_lora.py --torch-bf16
echo "### LoRA at the AVX2 level (the portable install at haswell), vs PEFT f32 at AVX2"
python benchmarks/bench_lora.py --cpu-level avx2 --targets q,v --batches 1,4 --python "$portable"
echo "### full training vs torch f32 and bf16 autocast"
python benchmarks/bench_train.py --torch-bf16
echo "### full training, toy --precision bf16, vs torch bf16 autocast"
python benchmarks/bench_train.py --precision bf16 --torch-bf16 --no-torch-f32 --configs smollm2
echo "### the portable install against the native build"
python benchmarks/bench_wheel.py --wheel-python "$portable" --rounds 3
uptime
echo "### done $(date -u)"
