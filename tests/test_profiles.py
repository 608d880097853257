import pytest

from workbench import ProfileError, profiles


@pytest.mark.parametrize("name", profiles.PRESETS)
def test_every_preset_is_accepted_by_executorch(name):
    parsed = profiles.parse(name)
    assert parsed.name == name
    assert parsed.supports_int or parsed.supports_float


def test_parsed_profile_reports_profiles_and_extensions():
    parsed = profiles.parse("TOSA-1.1+INT+int64")
    assert parsed.version == "1.1"
    assert parsed.profiles == ("INT",)
    assert parsed.declares("int64")
    assert not profiles.parse("TOSA-1.0+INT").declares("int64")
    assert profiles.parse("TOSA-1.0+INT+u55").u55
    mixed = profiles.parse("TOSA-1.0+INT+FP")
    assert mixed.supports_int and mixed.supports_float


@pytest.mark.parametrize(
    "bad",
    ["TOSA-2.0+INT", "TOSA-1.0+int64+INT", "TOSA-1.0", "tosa-1.0+INT", "TOSA-1.0+FP+int16", "", "   ", "INT"],
)
def test_invalid_profile_lists_valid_forms(bad):
    with pytest.raises(ProfileError) as info:
        profiles.parse(bad)
    message = str(info.value)
    assert "versions: 1.0, 1.1" in message
    assert "INT" in message and "FP" in message
    assert "int64" in message  # an extension of TOSA-1.1
    assert "TOSA-1.0+INT" in message  # the presets


def test_non_string_profile_is_a_profile_error():
    with pytest.raises(ProfileError):
        profiles.parse(None)
