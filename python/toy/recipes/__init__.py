"""Recipes: a model, how it is realized, and its training step."""

from .from_scratch import FromScratch
from .full import FullFineTune
from .lora import LoRA
from .preference import DPO, ORPO
from .vit import ViTTiny, load_vit
from .warm_start import WarmStart

# the recipes (toy-train's names) whose run writes adapter.gguf, LoRA over the run's "base"
ADAPTER_RECIPES = ("lora", "instruct", "dpo", "orpo")

__all__ = ["DPO", "FromScratch", "FullFineTune", "LoRA", "ORPO", "ViTTiny", "WarmStart", "load_vit"]
