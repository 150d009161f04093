"""toy: train and fine-tune llama-family models, one ggml graph per step."""
from ._native import ToyError, DeviceNotBuilt
from .config import LlamaConfig, RecipeOptions, ViTConfig
from .optim import adamw_hp
from . import recipes
from .generate import generate, load_model
from .recipes import load_vit

__version__ = "0.1.0"

__all__ = ["ToyError", "DeviceNotBuilt", "LlamaConfig", "RecipeOptions", "ViTConfig", "adamw_hp", "recipes",
           "generate", "load_model", "load_vit", "__version__"]
