#!/usr/bin/env bash
# Recreate vendor/ggml from the llama-cpp-python sdist on PyPI.
#
#   bash vendor/update_ggml.sh [path/to/llama_cpp_python-0.3.36.tar.gz]
#
# Without an argument the sdist is fetched with pip. The checksum is verified,
# the ggml folder is copied, pruned to what we build, and vendor/patches/*.patch
# (if any) are applied in name order.
set -euo pipefail

PACKAGE=llama-cpp-python
VERSION=0.3.36
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

sdist="${1:-}"
if [ -z "$sdist" ]; then
    # --no-build-isolation: pip only needs the file; without it pip would try
    # to build cmake from source for the metadata step.
    pip download --no-deps --no-binary :all: --no-build-isolation \
        "$PACKAGE==$VERSION" -d "$work/dl" >&2
    sdist="$(ls "$work"/dl/llama_cpp_python-"$VERSION".tar.gz)"
fi
echo "$SHA256  $sdist" | sha256sum -c - >&2

tar xzf "$sdist" -C "$work"
src="$work/llama_cpp_python-$VERSION/vendor/llama.cpp"

dest="$here/ggml"
# PROVENANCE.md is ours, not upstream's: keep it across the refresh
provenance="$(mktemp)"
[ -f "$dest/PROVENANCE.md" ] && cp "$dest/PROVENANCE.md" "$provenance"
rm -rf "$dest"
mkdir -p "$dest/src"
[ -s "$provenance" ] && cp "$provenance" "$dest/PROVENANCE.md"
rm -f "$provenance"
cp "$src/LICENSE" "$dest/LICENSE"
cp "$src/ggml/CMakeLists.txt" "$dest/"
cp -r "$src/ggml/cmake" "$src/ggml/include" "$dest/"
# core sources: every file directly in ggml/src
find "$src/ggml/src" -maxdepth 1 -type f -exec cp {} "$dest/src/" \;
# backends we build: cpu always, cuda/metal/vulkan/blas optionally
for backend in ggml-cpu ggml-cuda ggml-metal ggml-blas ggml-vulkan; do
    cp -r "$src/ggml/src/$backend" "$dest/src/"
done

shopt -s nullglob
for patch in "$here"/patches/*.patch; do
    echo "applying $(basename "$patch")" >&2
    patch -d "$dest" -p1 < "$patch"
done
echo "vendor/ggml recreated from $PACKAGE $VERSION" >&2
