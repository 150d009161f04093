"""toy: train and fine-tune llama-family models, one ggml graph per step."""
__version__ = "0.1.0"   # first: the modules below read it

from .errors import DeviceNotBuilt, InputError, ToyError
from .config import ModelConfig, RecipeOptions, ViTConfig
from .session import ModelDesc, Session
from .optim import adamw_hp
from . import recipes, samples
from .generate import Chat, generate, load_model
from .recipes import load_vit, FromScratch, WarmStart, LoRA, FullFineTune, DPO, ORPO
from .finetuning import finetune, Run
from .merge import merge_lora
from .models import default_model_path

__all__ = ["ToyError", "InputError", "DeviceNotBuilt", "ModelConfig", "RecipeOptions", "ViTConfig",
           "ModelDesc", "Session", "adamw_hp", "recipes", "generate", "load_model", "Chat", "load_vit", "__version__",
           "FromScratch", "WarmStart", "LoRA", "FullFineTune", "DPO", "ORPO", "finetune", "Run", "merge_lora",
           "default_model_path", "samples"]
