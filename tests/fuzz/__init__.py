"""Fuzzing toy's GGUF reading: seeded mutations of small llama GGUFs
(gguf_mutate.py), and the files that once broke it (cases/)."""
