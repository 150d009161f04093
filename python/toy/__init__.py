"""toy: train and fine-tune llama-family models, one ggml graph per step."""
from .core.version import __version__

from .core.errors import DeviceNotBuilt, InputError, ToyError
from .core.config import ModelConfig, RecipeOptions, ViTConfig
from .native.session import ModelDesc, Session
from .training.optim import adamw_hp
from . import recipes
from .datasets import samples
from .generation.chat import Chat
from .generation.generate import generate
from .generation.model import load_model
from .recipes import load_vit, FromScratch, WarmStart, LoRA, FullFineTune, DPO, ORPO
from .training.finetune import finetune, Run
from .formats.merge import merge_lora
from .core.models import default_model_path

__all__ = ["ToyError", "InputError", "DeviceNotBuilt", "ModelConfig", "RecipeOptions", "ViTConfig",
           "ModelDesc", "Session", "adamw_hp", "recipes", "generate", "load_model", "Chat", "load_vit", "__version__",
           "FromScratch", "WarmStart", "LoRA", "FullFineTune", "DPO", "ORPO", "finetune", "Run", "merge_lora",
           "default_model_path", "samples"]
