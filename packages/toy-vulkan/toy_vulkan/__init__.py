"""toy's Vulkan backend: toy_vulkan/lib/libtinynn_vulkan.so.

Nothing to import by hand: toy looks for this package when a recipe or the
CLI asks for device="vulkan" (toy.native.library.library_path)."""
