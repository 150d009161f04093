"""toy-train vit-tiny: a small ViT image classifier from random init, on
the handwritten digits toy ships (default) or a folder of class folders."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import bounds, plan
from ..core.config import ViTConfig
from ..core.errors import InputError
from ..core.machine import check_fits
from ..datasets.batches import ImageSource
from ..datasets.images import FolderScan, held_out_split, load_digits, scan_folder, shown
from ..recipes import ViTTiny
from . import common as options

HELP = "train a ViT image classifier (default data: the 8x8 digits toy ships)"


@dataclass(kw_only=True, frozen=True)
class ViTTinyOptions(options.TrainingOptions):
    recipe: str = "vit-tiny"
    # the images
    images: str | None = None  # None: the 8x8 digits toy ships
    image_size: int | None = None  # None: the images' one common size
    eval_split: float = 0.2
    epochs: int = 30
    batch: int = 32
    # AdamW
    lr: float = 2e-3
    clip_norm: float = 1.0
    warmup: int = 50
    min_lr: float | None = 2e-3 / 20
    weight_decay: float = 0.05
    # the model's shape
    patch: int = 4
    d_model: int = 64
    layers: int = 4
    heads: int = 4
    d_ff: int = 0  # 0: 4 d-model
    init_scale: float = 0.02


def add_options(p) -> None:
    defaults = ViTTinyOptions()
    options.add_run_options(p, defaults, steps_help="optimizer steps (default: --epochs over the training images)")
    data = p.add_argument_group("images")
    data.add_argument(
        "--images",
        default=defaults.images,
        metavar="DIR",
        help="a folder with one sub-folder of image files per class (default: the handwritten "
        "digits toy ships, 1,797 8x8 images, 10 classes)",
    )
    data.add_argument(
        "--image-size",
        type=bounds.option("image-size"),
        default=defaults.image_size,
        help="resize every image to N x N (default: keep their one common size)",
    )
    data.add_argument(
        "--eval-split",
        type=bounds.option("eval-split"),
        default=defaults.eval_split,
        help="held-out fraction, the same images in every run (default 0.2)",
    )
    data.add_argument(
        "--epochs",
        type=bounds.option("epochs"),
        default=defaults.epochs,
        help=f"passes over the training images (default {defaults.epochs})",
    )
    data.add_argument(
        "--batch", type=bounds.option("batch"), default=defaults.batch, help="images per micro-batch (default 32)"
    )
    data.add_argument(
        "--grad-accum",
        type=bounds.option("grad-accum"),
        default=defaults.grad_accum,
        help="micro-batches per optimizer step (default 1)",
    )
    options.add_optimizer_options(p, defaults)
    model = p.add_argument_group("model shape")
    model.add_argument(
        "--patch",
        type=bounds.option("patch"),
        default=defaults.patch,
        help="patch side in pixels (default 4: the digits are four patches)",
    )
    model.add_argument(
        "--d-model", type=bounds.option("d-model"), default=defaults.d_model, help="residual width (default 64)"
    )
    model.add_argument(
        "--layers", type=bounds.option("layers"), default=defaults.layers, help="transformer blocks (default 4)"
    )
    model.add_argument(
        "--heads", type=bounds.option("heads"), default=defaults.heads, help="attention heads (default 4)"
    )
    model.add_argument(
        "--d-ff", type=bounds.option("d-ff"), default=defaults.d_ff, help="MLP width (default 4 d-model)"
    )
    options.add_init_scale(p, defaults)


def check(args: ViTTinyOptions) -> None:
    if args.eval_split >= 1:
        raise InputError("--eval-split must be below 1")
    if args.d_model % args.heads:
        raise InputError(f"--heads ({args.heads}) must divide --d-model ({args.d_model})")


def prepare(args: ViTTinyOptions) -> options.Prepared:
    # a folder is scanned (headers only) and loaded once the recipe is realized:
    # its memory and the model's are checked before any picture is decoded
    data = load_digits() if args.images is None else scan_folder(args.images, args.image_size)
    if args.images is None and args.image_size not in (None, data.image_size):
        raise InputError(f"the digits are {data.image_size}x{data.image_size}; --image-size is for --images")
    patch = args.patch
    if data.image_size % patch:
        raise InputError(f"--patch {patch} does not divide the image size {data.image_size}")
    cfg = ViTConfig(
        n_classes=len(data.classes),
        image_size=data.image_size,
        patch=patch,
        channels=data.channels,
        d_model=args.d_model,
        n_layers=args.layers,
        n_heads=args.heads,
        d_ff=args.d_ff,
    )
    train, held_out = held_out_split(len(data.labels), args.eval_split)
    if len(train) == 0:
        raise InputError(f"no training images left after holding out --eval-split {args.eval_split}")
    if isinstance(data, FolderScan):
        check_folder_fits(data, cfg, len(held_out), args)
    check_batch_fits_the_set(args, len(train), data.name if args.images is None else shown(args.images))
    recipe = ViTTiny(args.device, args.threads)
    options.realize_or_input_error(
        recipe.realize, cfg, args.batch, args.seed, args.init_scale, args.clip_norm, data.classes
    )
    if isinstance(data, FolderScan):
        data = data.load()
    source = ImageSource(data.images, data.labels, patch, train, held_out, data.name, args)
    config = {
        "model": cfg.to_dict(),
        "classes": data.classes,
        "images": data.name,
        "train_images": int(len(train)),
        "eval_images": int(len(held_out)),
        "epochs": args.epochs,
    }
    return options.Prepared(recipe, source, config, "model.gguf")


def check_folder_fits(scan: FolderScan, cfg: ViTConfig, n_eval: int, args: ViTTinyOptions) -> None:
    """Refuse, with the figures, a folder whose images (the loaded set, the
    held-out patches and a step's patches, see batches.ImageSource) do not
    fit in this machine's memory, alone or with the model's training step."""
    images = scan.load_bytes() + (n_eval + 2 * args.batch * args.grad_accum) * scan.image_bytes()
    what = (
        f"{len(scan):,} images of {cfg.image_size:,} x {cfg.image_size:,} x {cfg.channels} "
        f"(float32) from {shown(scan.root)}"
    )
    check_fits(images, f"loading {what}", "give a smaller --image-size, or fewer images")
    check_fits(
        images + plan.vit_training_bytes(cfg, args.batch),
        f"a ViT of {cfg.n_patches:,} patches per image trained on {what}",
        "give a smaller --image-size or --batch, or fewer images",
    )


def check_batch_fits_the_set(args: ViTTinyOptions, n_train: int, name: str) -> None:
    """A step takes --batch x --grad-accum distinct training images (at most
    an epoch's worth: batches.EpochQueue draws one permutation at a time); a
    set smaller than that is refused here, with the --batch that fits,
    instead of failing in the step's upload."""
    per_step = args.batch * args.grad_accum
    if per_step <= n_train:
        return
    if args.grad_accum == 1:
        raise InputError(
            f"--batch {args.batch} is more than the {n_train:,} training images of {name}: "
            f"give --batch {n_train} or smaller, or more images"
        )
    raise InputError(
        f"--batch {args.batch} x --grad-accum {args.grad_accum} = {per_step:,} images a step is "
        f"more than the {n_train:,} training images of {name}: give a smaller --batch or "
        f"--grad-accum (their product at most {n_train}), or more images"
    )


COMMAND = options.RecipeCommand(HELP, ViTTinyOptions, add_options, check, prepare)
