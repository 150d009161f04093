"""toy's CUDA backend: toy_cuda/lib/libtinynn_cuda.so.

Nothing to import by hand: toy looks for this package when a recipe or the
CLI asks for device="cuda" (toy.native.library.library_path)."""
