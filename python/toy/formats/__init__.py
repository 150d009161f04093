"""GGUF files: reading and writing them, LoRA adapters, merging, donor embeddings."""
