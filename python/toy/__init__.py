"""toy: train and fine-tune llama-family models, one ggml graph per step."""
from .errors import DeviceNotBuilt, InputError, ToyError
from .config import ModelConfig, RecipeOptions, ViTConfig
from .session import ModelDesc, Session
from .optim import adamw_hp
from . import recipes
from .generate import generate, load_model
from .recipes import load_vit

__version__ = "0.1.0"

__all__ = ["ToyError", "InputError", "DeviceNotBuilt", "ModelConfig", "RecipeOptions", "ViTConfig",
           "ModelDesc", "Session", "adamw_hp", "recipes", "generate", "load_model", "load_vit", "__version__"]
