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
    ["TOSA-2.0+INT", "TOSA-1.0+int64+INT", "TOSA-1.0", "TOSA-1.0+FP+int16", "", "   ", "INT"],
)
def test_invalid_profile_is_one_short_line_with_the_valid_form(bad):
    with pytest.raises(ProfileError) as info:
        profiles.parse(bad)
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    assert "versions: 1.0, 1.1" in message
    assert "INT" in message and "FP" in message
    assert "int64" in message  # an extension of TOSA-1.1
    assert "TOSA-1.0+INT" in message  # the presets


def test_non_string_profile_is_a_profile_error():
    with pytest.raises(ProfileError):
        profiles.parse(None)


def test_a_profile_is_read_whatever_its_letters_case_and_named_as_executorch_spells_it():
    assert profiles.parse("tosa-1.1+int+INT64").name == "TOSA-1.1+INT+int64"
    assert profiles.parse(" Tosa-1.0+fp+BF16 ").name == "TOSA-1.0+FP+bf16"


@pytest.mark.parametrize("bad,nearest", [("TOSA-1.0+INT+int64", "TOSA-1.1+INT+int64"),
                                         ("TOSA-1.0+int64+INT", "TOSA-1.1+INT+int64")])
def test_an_extension_of_the_other_version_suggests_that_version(bad, nearest):
    with pytest.raises(ProfileError, match=f"did you mean {nearest.replace('+', '[+]')}[?]"):
        profiles.parse(bad)
