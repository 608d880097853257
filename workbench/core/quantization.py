"""How a quantized case is quantized: the configurations executorch's Arm quantizer offers, as one named value.

    int8                  8-bit activations and weights, weights per channel (get_symmetric_quantization_config)
    a16w8                 16-bit activations, 8-bit weights (get_symmetric_a16w8_quantization_config); its int16
                          tensors need a profile declaring +int16
    ...+per-tensor        one scale per weight tensor instead of one per output channel (is_per_channel=False)
    ...+io                the model's inputs and outputs quantized too (TOSAQuantizer.set_io with the same config)
    ...+eps=2**-16        the activation observers' eps (the smallest scale they give) instead of the config
                          function's default (2**-16 for int8, 2**-12 for a16w8)

These are the settings executorch's own Arm tests use (backends/arm/test/tester/test_pipeline.py, TosaPipelineINT:
`per_channel_quantization`, `symmetric_io_quantization`, a16w8 with the int16 extension and its `epsilon`, 2**-16
by default, while most a16w8 tests then call set_global(get_symmetric_a16w8_quantization_config()), whose eps is
2**-12). A name is written in that order, e.g. "a16w8+per-tensor+io".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .errors import WorkbenchError

# scheme name -> the activations' integer type
SCHEMES = {"int8": "int8", "a16w8": "int16"}
MODIFIERS = ("per-tensor", "io", "eps=<number>")
_POWER_OF_TWO = re.compile(r"^2\*\*(-?\d+)$")


@dataclass(frozen=True)
class Quantization:
    scheme: str = "int8"
    per_channel: bool = True  # weights: one scale per output channel, else one per tensor
    io: bool = False  # the model's inputs and outputs quantized too
    epsilon: float | None = None  # the activation observers' eps; None: the config function's default

    @property
    def activations(self) -> str:
        """The activations' integer type: int8 or int16."""
        return SCHEMES[self.scheme]

    @property
    def name(self) -> str:
        return (self.scheme + ("" if self.per_channel else "+per-tensor") + ("+io" if self.io else "")
                + ("" if self.epsilon is None else f"+eps={_number(self.epsilon)}"))

    def __str__(self) -> str:
        return self.name


DEFAULT = Quantization()
# The configurations offered by name in choices (the explorer, the CLI's help).
CHOICES: tuple[str, ...] = tuple(Quantization(scheme, per_channel, io).name
                                 for scheme in SCHEMES for per_channel in (True, False) for io in (False, True))


def valid_forms() -> str:
    return (f"<scheme>[+per-tensor][+io][+eps=<number>] with scheme {' or '.join(SCHEMES)}, e.g. int8, a16w8, "
            "a16w8+per-tensor, a16w8+eps=2**-16")


def parse(value) -> Quantization:
    """A Quantization from its name (or itself); a WorkbenchError naming the valid forms otherwise."""
    if isinstance(value, Quantization):
        return value
    if not isinstance(value, str) or not value.strip():
        raise WorkbenchError(f"a quantization must be a name like 'int8' or 'a16w8+per-tensor', got {value!r}; "
                             f"valid: {valid_forms()}")
    scheme, *modifiers = [part.strip().lower() for part in value.strip().split("+")]
    epsilons = [_epsilon(m.removeprefix("eps=")) for m in modifiers if m.startswith("eps=")]
    flags = [m for m in modifiers if not m.startswith("eps=")]
    if (scheme not in SCHEMES or any(f not in MODIFIERS for f in flags) or len(set(modifiers)) != len(modifiers)
            or None in epsilons or len(epsilons) > 1):
        raise WorkbenchError(f"unknown quantization {value!r}; valid: {valid_forms()}")
    return Quantization(scheme, per_channel="per-tensor" not in flags, io="io" in flags,
                        epsilon=epsilons[0] if epsilons else None)


def call_arguments(name: str) -> str:
    """The keyword argument of Case.of/Case.model (run_case/run_model) that quantizes as a result's
    `quantization` names, with its leading comma ("" for a case that is not quantized)."""
    return f", quantization={name!r}" if name else ""


def _epsilon(text: str) -> float | None:
    power = _POWER_OF_TWO.match(text)
    try:
        number = 2.0 ** int(power.group(1)) if power else float(text)
    except ValueError:
        return None
    return number if number > 0 and math.isfinite(number) else None


def _number(value: float) -> str:
    exponent = math.log2(value)
    return f"2**{int(exponent)}" if exponent == int(exponent) else repr(value)
