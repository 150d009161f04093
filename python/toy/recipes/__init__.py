"""Recipes: a model, how it is realized, and its training step."""
from .from_scratch import FromScratch
from .full import FullFineTune
from .lora import LoRA
from .vit import ViTTiny, load_vit
from .warm_start import WarmStart

__all__ = ["FromScratch", "FullFineTune", "LoRA", "ViTTiny", "WarmStart", "load_vit"]
