"""The model's configuration is defined once on each side of the C/Python
seam: ModelConfig's fields are tnn_model_config's, by name and type, and
crossing the seam (config_to_c, config_from_c) keeps every value. A field
added to one side and not the other fails here."""

import math
from dataclasses import fields

import pytest

import toy
from toy.core.ffi import ffi
from toy.native import session as native

# the C types a Python field's annotation may cross the seam as
PYTHON_TYPE_OF = {"int32_t": ("int", "bool"), "uint64_t": ("int",), "float": ("float",), "char[1025]": ("str",)}


def c_fields(struct: str) -> dict[str, str]:
    return {name: field.type.cname for name, field in ffi.typeof(struct).fields}


def test_model_config_fields_are_the_c_structs_but_the_runs():
    c = c_fields("tnn_model_config")
    python = {f.name: f.type for f in fields(toy.ModelConfig)}
    shape_in_c = set(c) - set(native.C_RUN_FIELDS) - set(native.C_TRAINER_FIELDS)
    shape_in_python = set(python) - set(native.PYTHON_ONLY_FIELDS)
    assert shape_in_c - shape_in_python == set(), "tnn_model_config fields ModelConfig lacks"
    assert shape_in_python - shape_in_c == set(), "ModelConfig fields tnn_model_config lacks"
    for name in sorted(shape_in_c):
        assert python[name] in PYTHON_TYPE_OF[c[name]], f"{name}: C {c[name]}, Python {python[name]}"


def test_the_run_fields_are_recipe_options():
    c = c_fields("tnn_model_config")
    recipe = {f.name: f.type for f in fields(toy.RecipeOptions)}
    for name in native.C_RUN_FIELDS:
        assert name in c and name in recipe
        assert recipe[name] in PYTHON_TYPE_OF[c[name]], f"{name}: C {c[name]}, Python {recipe[name]}"


def distinct_config() -> toy.ModelConfig:
    """A ModelConfig whose every field differs from its default (and from the
    other fields' values), so that a field dropped on the way shows."""
    values = {}
    for number, f in enumerate(fields(toy.ModelConfig), start=3):
        if f.name == "arch":
            continue
        if f.type == "bool":
            values[f.name] = not f.default
        elif f.type == "int":
            values[f.name] = number
        elif f.type == "str":
            values[f.name] = "ac" * number
        else:
            values[f.name] = number + 0.5
    return toy.ModelConfig(**values)


def test_config_crosses_the_seam_whole():
    cfg = distinct_config()
    c = ffi.new("tnn_model_config *")
    native.config_to_c(cfg, c)
    back = native.config_from_c(c)
    for f in fields(toy.ModelConfig):
        assert getattr(back, f.name) == pytest.approx(getattr(cfg, f.name)), f.name


def test_desc_fills_the_run_fields_from_the_recipe_options():
    cfg = toy.ModelConfig(vocab=32, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, untied=True, qkv_bias=True)
    opts = toy.RecipeOptions(t_seq=7, t_batch=3, seed=11, init_scale=0.25)
    desc, _keep = native.ModelDesc.from_scratch(cfg, opts).to_c()
    c = desc.config
    assert (c.t_seq, c.t_batch, c.seed, c.untied, c.qkv_bias, c.vocab) == (7, 3, 11, 1, 1, 32)
    assert math.isclose(c.init_scale, 0.25)


def test_vit_config_fields_are_the_c_structs():
    c = c_fields("tnn_vit_config")
    assert set(c) == set(native.VIT_C_FIELDS) | set(native.VIT_C_RUN_FIELDS)
    cfg = toy.ViTConfig(n_classes=5, image_size=12, patch=3, channels=2, d_model=24, n_layers=3, n_heads=4)
    desc, _keep = native.ModelDesc.vit(cfg, t_batch=6, seed=9, init_scale=0.5).to_c()
    for name in native.VIT_C_FIELDS:
        assert getattr(desc.vit, name) == pytest.approx(getattr(cfg, name)), name
    assert (desc.vit.t_batch, desc.vit.seed) == (6, 9)
