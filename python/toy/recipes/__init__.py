"""Recipes: a model, how it is realized, and its training step."""
from .from_scratch import FromScratch

__all__ = ["FromScratch"]
