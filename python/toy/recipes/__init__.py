"""Recipes: a model, how it is realized, and its training step."""
from .from_scratch import FromScratch
from .full import FullFineTune
from .lora import LoRA
from .warm_start import WarmStart

__all__ = ["FromScratch", "FullFineTune", "LoRA", "WarmStart"]
