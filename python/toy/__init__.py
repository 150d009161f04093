"""toy: train and fine-tune llama-family models, one ggml graph per step."""
from . import recipes
from .core.config import ModelConfig, RecipeOptions, ViTConfig
from .core.errors import DeviceNotBuilt, InputError, ToyError
from .core.models import default_model_path
from .core.version import __version__
from .datasets import samples
from .formats.merge import merge_lora
from .generation.chat import Chat
from .generation.generate import generate
from .generation.model import load_model
from .native.session import ModelDesc, Session
from .recipes import DPO, ORPO, FromScratch, FullFineTune, LoRA, WarmStart, load_vit
from .training.finetune import Run, finetune
from .training.optim import adamw_hp

__all__ = ["ToyError", "InputError", "DeviceNotBuilt", "ModelConfig", "RecipeOptions", "ViTConfig",
           "ModelDesc", "Session", "adamw_hp", "recipes", "generate", "load_model", "Chat", "load_vit", "__version__",
           "FromScratch", "WarmStart", "LoRA", "FullFineTune", "DPO", "ORPO", "finetune", "Run", "merge_lora",
           "default_model_path", "samples"]
