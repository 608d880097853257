"""Property tests: random profile strings and random shapes never make the workbench itself raise."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench
from workbench import Outcome, ProfileError, profiles

VERSIONS = ["1.0", "1.1"]
EXTENSIONS = {"1.0": {"INT": ["int16", "int4", "var", "cf", "u55"], "FP": ["bf16", "fp8e4m3", "fp8e5m2", "fft", "var", "cf"]},
              "1.1": {"INT": ["shape", "int64", "int16", "int4", "var", "cf", "u55"],
                      "FP": ["shape", "int64", "bf16", "fp8e4m3", "fp8e5m2", "fft", "var", "cf"]}}


@st.composite
def valid_profiles(draw):
    version = draw(st.sampled_from(VERSIONS))
    chosen = draw(st.sampled_from([["INT"], ["FP"], ["INT", "FP"]]))
    allowed = sorted({e for p in chosen for e in EXTENSIONS[version][p]})
    extensions = draw(st.lists(st.sampled_from(allowed), unique=True, max_size=3))
    return "+".join([f"TOSA-{version}", *chosen, *extensions])


@settings(max_examples=150, deadline=None)
@given(valid_profiles())
def test_valid_profiles_are_accepted(text):
    parsed = profiles.parse(text)
    assert parsed.version in VERSIONS


TOKENS = ["TOSA", "-", "+", "1.0", "1.1", "2.0", "INT", "FP", "int", "int64", "int16", "u55", "bf16", "8k", " ", "x",
          "shape", ".", "1", "cf"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=30), st.lists(st.sampled_from(TOKENS), max_size=8).map("".join)))
def test_any_string_is_accepted_or_a_profile_error(text):
    """Refused in one line that says what would be valid: a TOSA profile's versions, the Ethos-U targets, or a VGF
    target's form."""
    try:
        profiles.parse(text)
    except ProfileError as error:
        message = str(error)
        assert "\n" not in message and any(valid in message for valid in ("versions:", "valid: ethos-u",
                                                                           "e.g. vgf:")), message


SHAPE_POLYMORPHIC = ["add", "sub", "mul", "neg", "abs", "relu", "maximum", "eq", "lt", "bitwise_and", "where", "clamp"]


@st.composite
def catalogue_cases(draw):
    op = draw(st.sampled_from(SHAPE_POLYMORPHIC))
    entry = workbench.catalogue.get(op)
    dtype = draw(st.sampled_from([d for d in entry.dtypes if d in ("bool", "int32", "int64", "float32", "float16")]))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    seed = draw(st.integers(0, 2**16))
    profile = draw(st.sampled_from(["TOSA-1.0+INT", "TOSA-1.0+FP", "TOSA-1.1+INT+int64"]))
    return entry, dtype, shape, seed, profile


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(catalogue_cases())
def test_random_shapes_and_seeds_never_make_the_workbench_raise(torch, case):
    entry, dtype, shape, seed, profile = case
    template = entry.inputs(dtype, seed)
    generator = torch.Generator().manual_seed(seed)
    inputs = tuple(
        (torch.randint(0, 2, shape, generator=generator).to(t.dtype) if t.dtype == torch.bool
         else torch.randint(-50, 50, shape, generator=generator).to(t.dtype))
        for t in template
    )
    result = workbench.run_model(entry.module(dtype), inputs, profile)
    assert result.outcome in Outcome
    if result.outcome in (Outcome.DELEGATED, Outcome.PARTIAL):
        assert result.outputs and result.outputs[0].shape == tuple(entry.module(dtype)(*inputs).shape)
