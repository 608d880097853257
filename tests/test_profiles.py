import itertools

import pytest

from workbench import ProfileError, profiles
from workbench.core import profile_table
from workbench.stack import ethos_u, internals, loader


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


@pytest.mark.parametrize("bad,nearest", [("TOSA-1.0+IN", "TOSA-1.0+INT"), ("tosa-1.0-int", "TOSA-1.0+INT"),
                                         ("TOSA-1.1+FP+in64", "TOSA-1.1+FP+int64"), ("INT", "TOSA-1.0+INT"),
                                         ("ethos-u55-12", "ethos-u55-128"), ("Ethos-U85-250", "ethos-u85-256"),
                                         ("vgf:TOSA-1.0+F", "vgf:TOSA-1.0+FP")])
@pytest.mark.parametrize("validate", [profiles.check, profiles.parse], ids=["table", "executorch"])
def test_a_misspelt_profile_suggests_the_nearest_valid_one_as_operators_and_policies_do(bad, nearest, validate):
    with pytest.raises(ProfileError) as info:
        validate(bad)
    message = str(info.value)
    assert f"did you mean {nearest}?" in message and "\n" not in message, message


# --- the committed table (core/profile_table.py) against executorch's own parser ---------------------------------

# Tokens beside the table's own: near misses of a profile, an extension, the level and the subset marker.
NEAR_MISS_TOKENS = ("", "bogus", "Int", "INT64", "8K", "u65", "int8")
NEAR_MISS_VERSIONS = ("1", "1.00", "1.0.0", "1.1.7", "01.1", "0.9", "1.2", "2.0", "1.10", "1.", ".1", "1..0",
                      "\u0661.\u0660", "1.0a", "1." + "0" * 5000)
NEAR_MISS_NAMES = ("TOSA-1.0", "TOSA-1.0+", "TOSA-1.0++INT", "TOSA-1.0+INT\n", "TOSA-1.0+INT\n+FP", "TOSA 1.0+INT",
                   " TOSA-1.0+INT", "tosa-1.0+INT", "TOSA-+INT", "TOSA-1.0-INT", "FOSA-1.0+INT")


def _forms():
    """Every string of up to three tokens from the table's vocabulary and its near misses under each version,
    up to two under each near-miss version, and whole-string near misses."""
    table = profile_table.PINNED
    extensions = [e for by_profile in table.extensions.values() for found in by_profile.values() for e in found]
    tokens = list(dict.fromkeys([*table.profiles, *extensions, table.level, table.subset, *NEAR_MISS_TOKENS]))
    for versions, longest in ((table.versions, 3), (NEAR_MISS_VERSIONS, 2)):
        for version in versions:
            for count in range(longest + 1):
                for combination in itertools.product(tokens, repeat=count):
                    yield f"TOSA-{version}+" + "+".join(combination)
    yield from NEAR_MISS_NAMES


def _executorch_fields(name):
    try:
        parsed = loader.specification().TosaSpecification.create_from_string(name)
    except Exception:  # executorch's refusal, whatever it raises
        return None
    return internals.tosa_spec_fields(parsed)


def _table_fields(name):
    try:
        return tuple(profile_table.PINNED.fields(name))
    except ValueError:
        return None


def test_the_table_holds_executorchs_versions_profiles_and_extensions():
    assert profiles.executorch_table() == profile_table.PINNED


def test_every_form_of_the_table_and_its_near_misses_gets_executorchs_verdict():
    verdicts = [(name, _executorch_fields(name), _table_fields(name)) for name in _forms()]
    differing = [(name[:40], theirs, ours) for name, theirs, ours in verdicts if theirs != ours]
    assert not differing, f"{len(differing)} strings on which the table and executorch differ, e.g. {differing[:5]}"
    accepted = sum(theirs is not None for _, theirs, _ in verdicts)
    assert 1000 < accepted < len(verdicts) - 1000  # both verdicts, many times over


def test_the_tables_ethos_u_defaults_are_executorchs():
    for accelerator in ethos_u.ACCELERATORS:
        assert profile_table.ethos_u_default(accelerator) == ethos_u.default_configuration(accelerator), accelerator


@pytest.mark.parametrize("text", ["tosa-1.1+int+INT64", "TOSA-1+INT", " TOSA-1.0+FP+bf16 ", "TOSA-1.0+INT+int64",
                                  "TOSA-1.1+FP+int4", "TOSA-1.0", "", "ethos-u55-128",
                                  "ethos-u85-256:Ethos_U85_SYS_DRAM_High:Sram_Only", "ethos-u55-128:Nope:Sram_Only",
                                  "ethos-u55-128:Ethos_U55_High_End_Embedded:Dedicated_Sram"])
def test_the_answer_without_the_stack_is_the_full_one(text):
    """profiles.check (the table, Vela's files) gives the name profiles.parse gives, or the same error."""
    def answer(function):
        try:
            return function(text)
        except ProfileError as exc:
            return str(exc)

    assert answer(profiles.check) == answer(lambda t: profiles.parse(t).name)


# Tosa_1_00.valid_extensions' INT list; the edit lets a branch take int64 under TOSA 1.0 too.
TOSA_1_0_INT_EXTENSIONS = '"INT": ["int16", "int4", "var", "cf", "u55"],'
PROBE_CHECK = """
import json
from workbench import ProfileError, profiles
try:
    answer = profiles.check("TOSA-1.0+INT+int64")
except ProfileError as exc:
    answer = "refused: " + str(exc)
print(json.dumps({"answer": answer}))
"""


def test_a_checkouts_own_parser_decides_what_it_accepts(tmp_path, checkouts, probe_with_environment):
    """The table describes the installed executorch only: under a branch that accepts more, its parser decides."""
    root = checkouts.make_checkout(tmp_path / "executorch")
    checkouts.edit(root, "tosa/specification.py", TOSA_1_0_INT_EXTENSIONS, TOSA_1_0_INT_EXTENSIONS.replace(
        '"u55"]', '"u55", "int64"]'))
    assert probe_with_environment(PROBE_CHECK, "WORKBENCH_ARM_BACKEND", None)["answer"].startswith("refused: ")
    assert probe_with_environment(PROBE_CHECK, "WORKBENCH_ARM_BACKEND", str(root))["answer"] == "TOSA-1.0+INT+int64"
