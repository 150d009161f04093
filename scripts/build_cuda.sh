#!/usr/bin/env bash
# Build libtinynn_cuda by hand (not part of CI): compile-only works on a machine
# without a GPU. cuBLAS comes from the nvidia-cublas wheel on PyPI.
#
#   bash scripts/build_cuda.sh [build-dir]      (default /tmp/toy-cuda-build)
#
# Measured on the 2-core development machine: about 21 minutes (at nice 19,
# sharing the cores), a 46 MB library that links libcudart and libcublas but
# not libcuda (GGML_CUDA_NO_VMM=ON). The library finds libcudart/libcublas
# through LD_LIBRARY_PATH (the wheel's nvidia/cu13/lib) at run time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-/tmp/toy-cuda-build}"
cublas_dir="${CUBLAS_DIR:-/tmp/toy-cublas}"
nvcc_bin="${NVCC:-$(ls -d /usr/local/cuda*/bin/nvcc 2>/dev/null | tail -n 1)}"

if [ ! -d "$cublas_dir/nvidia/cu13" ]; then
    pip install --target "$cublas_dir" 'nvidia-cublas>=13,<13.1'
fi
cublas="$cublas_dir/nvidia/cu13"
cuda_root="$(dirname "$(dirname "$nvcc_bin")")"

cmake -S "$root" -B "$build" -G Ninja \
    -DTOY_CUDA=ON -DTOY_CPU=OFF \
    -DCMAKE_CUDA_COMPILER="$nvcc_bin" \
    -DCUDAToolkit_ROOT="$cuda_root" \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
    -DGGML_CUDA_FA_QUANTS=f16-f16 \
    -DCUDA_cublas_LIBRARY="$cublas/lib/libcublas.so.13" \
    -DCUDA_cublasLt_LIBRARY="$cublas/lib/libcublasLt.so.13" \
    "-DCMAKE_CUDA_FLAGS=-isystem $cublas/include"
time cmake --build "$build" -j"$(nproc)" --target tinynn_cuda
ls -l "$build/libtinynn_cuda.so"
echo "to use it: copy it next to libtinynn_cpu (python -c 'import toy, os; print(os.path.dirname(toy.__file__))'/lib)"
echo "and export LD_LIBRARY_PATH=$cublas/lib:$cuda_root/lib:\$LD_LIBRARY_PATH"
