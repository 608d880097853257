"""The dtypes a case can take, their input values and their comparison tolerances."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import UnknownDtypeError, unknown_name


@dataclass(frozen=True)
class DtypeInfo:
    name: str
    torch_name: str  # attribute of `torch` holding the tensor dtype of the model's inputs
    atol: float  # absolute tolerance for comparing reference and eager outputs (0 = exact)
    rtol: float
    quantized: bool = False


# Floats are compared with tolerances near each format's resolution; qint8 compares a model quantized to
# int8 against the same quantized model run eagerly, in quantization steps of each output (QUANTIZED_* below).
DTYPES: dict[str, DtypeInfo] = {
    d.name: d
    for d in (
        DtypeInfo("bool", "bool", 0.0, 0.0),
        DtypeInfo("int8", "int8", 0.0, 0.0),
        DtypeInfo("int16", "int16", 0.0, 0.0),
        DtypeInfo("int32", "int32", 0.0, 0.0),
        DtypeInfo("int64", "int64", 0.0, 0.0),
        DtypeInfo("float16", "float16", 1e-2, 1e-2),
        DtypeInfo("bfloat16", "bfloat16", 5e-2, 5e-2),
        DtypeInfo("float32", "float32", 1e-5, 1e-4),
        DtypeInfo("qint8", "float32", 0.0, 0.0, quantized=True),
    )
}

# Output dtypes that no catalogue case takes but that a model may produce. fp8 is compared to one unit in the last
# place: rtol is the format's machine epsilon (2**-3 with e4m3's 3 mantissa bits, 2**-2 with e5m2's 2), one ULP
# relative to any normal value; atol its smallest subnormal (2**-9, 2**-16), one ULP near zero. executorch's own
# Arm tests compare fp8 after widening to float32 with atol = rtol = 1e-3, which is bit-exact for e4m3fn.
OUTPUT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float8_e4m3fn": (2.0**-9, 2.0**-3),
    "float8_e5m2": (2.0**-16, 2.0**-2),
}

# A quantized output is judged as executorch's INT pipeline judges it by default: the reference model's output
# against the quantized model run eagerly, allclose with atol = QUANTIZED_ATOL + scale * QUANTIZED_STEPS and
# rtol = QUANTIZED_RTOL, where scale is the output's own quantization scale (its dequantize node's).
# Source: executorch backends/arm/test/tester/test_pipeline.py (TosaPipelineINT: atol=1e-3, rtol=1e-3, qtol=1)
# and backends/test/harness/tester.py (Tester._compare_outputs: "atol += quantization_scale * qtol").
QUANTIZED_STEPS = 1
QUANTIZED_ATOL = 1e-3
QUANTIZED_RTOL = 1e-3

# executorch's FP pipelines compare a whole delegated graph's float outputs with eager PyTorch within these
# (backends/arm/test/tester/test_pipeline.py: TosaPipelineFP and VgfPipeline default to atol=1e-3, rtol=1e-3). The
# hunt's contract uses them for what no TOSA compliance mode judges (batch/hunt/contract.py: IMPRECISE).
FP_PIPELINE_ATOL = 1e-3
FP_PIPELINE_RTOL = 1e-3

INTEGER_DTYPES = ("int8", "int16", "int32", "int64")
FLOAT_DTYPES = ("float16", "bfloat16", "float32")
ALL_DTYPES = tuple(DTYPES)

# int64 inputs hold values beyond the int32 range wherever an op allows, so narrowing shows up in numbers.
INT64_WIDE = 2**40
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def get(name: str) -> DtypeInfo:
    try:
        return DTYPES[name]
    except (KeyError, TypeError):
        raise UnknownDtypeError(unknown_name("dtype", name, DTYPES)) from None
