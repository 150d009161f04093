"""toy: train and fine-tune llama-family models, one ggml graph per step.

The package in layers, lowest first; a subpackage imports only those below it
(scripts/check_py_imports.py checks this, and that no modules import each
other in a circle):

    core        errors and tinynn's status codes, the C header's declarations (ffi),
                the bounds of every number a user gives, configs, the memory plan,
                the machine's room, files, the MPI launcher's environment, the version
    native      the C library loaded for a device (library) and the Session over its calls
    formats     GGUF files: reading and writing (gguf_file), adapters, merging, donors
    text        tokenizers, chat templates, conversations rendered with them (chat)
    datasets    data readers: corpora, instruct and preference JSONL, images, the
                batches they feed a recipe, the sample data
    recipes     FromScratch, WarmStart, LoRA, FullFineTune, DPO, ORPO, ViTTiny over a Session
    generation  a model loaded to generate with, sampling, streaming, generate, Chat
    options     each recipe's typed options (one dataclass per recipe), their checks
                and their wiring to a realized recipe and its data
    training    a run: the step loop, run directory, checkpoints, resume, plots,
                data parallelism, and the Python API (finetune, Run)
    cli         the command lines: toy-train, toy-generate, toy-train plot
"""

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

__all__ = [
    "ToyError",
    "InputError",
    "DeviceNotBuilt",
    "ModelConfig",
    "RecipeOptions",
    "ViTConfig",
    "ModelDesc",
    "Session",
    "adamw_hp",
    "recipes",
    "generate",
    "load_model",
    "Chat",
    "load_vit",
    "__version__",
    "FromScratch",
    "WarmStart",
    "LoRA",
    "FullFineTune",
    "DPO",
    "ORPO",
    "finetune",
    "Run",
    "merge_lora",
    "default_model_path",
    "samples",
]
