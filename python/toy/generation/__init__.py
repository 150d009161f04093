"""Generating text: loading a model, sampling, streaming, generate and Chat."""
