"""A token model's layer kinds as a caller sets them (toy.ModelConfig's
layer_kinds and the flags that go with them): a kind the config cannot
build is refused in one line, before anything is allocated, naming what
would be accepted."""

import pytest

import toy
from test_gradients import TINY
from toy.native.session import ModelDesc, Session

MAMBA = dict(conv_kernel=4, ssm_state=4, ssm_groups=1, ssm_heads=2, ssm_inner=8)


def realize(**fields):
    cfg = toy.ModelConfig(**{**TINY.__dict__, "n_layers": 2, **fields})
    Session("cpu", threads=1).realize(ModelDesc.from_scratch(cfg, toy.RecipeOptions(t_seq=8, t_batch=1)))


@pytest.mark.parametrize(
    "fields, refusal",
    [
        (dict(layer_kinds="af"), "'f': 'a' .* or 'p' .* expected"),  # a feed-forward alone needs one_sublayer
        (dict(layer_kinds="ca", one_sublayer=True), "with one_sublayer 'a' .*, 'm' .* or 'f' .* expected"),
        (dict(layer_kinds="ax"), "layer 1 is 'x'"),
        (dict(layer_kinds="a"), "one letter for each of the 2 layers"),
        (dict(layer_kinds="pa", mamba_no_norm=True, ssm_inner=7), "ssm_inner .* a multiple of ssm_heads"),
        (dict(layer_kinds="dm", ssm_inner=8, conv_kernel=4, ssm_state=4, ssm_groups=1, ssm_heads=2), "in one model"),
    ],
)
def test_a_config_whose_layers_cannot_be_built_is_refused_in_one_line(fields, refusal):
    with pytest.raises(toy.ToyError, match=refusal) as refused:
        realize(**{**MAMBA, **fields})
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "fields",
    [
        dict(layer_kinds="mf", one_sublayer=True, ffn_relu_sq=True),  # Nemotron-H's
        dict(layer_kinds="pp", mamba_no_norm=True),  # Falcon-H1's
        dict(layer_kinds="pa"),
    ],
)
def test_the_new_kinds_build(fields):
    realize(**{**MAMBA, **fields})
