"""The outcome vocabulary of a case, defined in one place.

Outcome (what the partitioner and lowering did):
  delegated       every compute node ended in TOSA delegates
  partial         some compute nodes delegated, some left on CPU
  fallback        nothing delegated and no error: the whole program runs on CPU
  lowering_error  conversion to edge, partitioning or TOSA lowering raised
                  (typically: the partitioner accepted a node that lowering cannot carry)
  vela_error      an Ethos-U target only: TOSA lowering succeeded, then Vela refused the TOSA graph
  vgf_error       a VGF target only: TOSA lowering succeeded, then Arm's ML SDK model-converter refused the graph
  export_error    the model could not be quantized or exported with torch.export
  crashed         the isolated child process running the case was killed by a signal (e.g. SIGSEGV in
                  native code); the error names the signal and the stage it was in
  timeout         the case ran past its time limit and its child process was stopped; the error names the stage

Numerics (what the TOSA reference model computed against eager PyTorch):
  match            every output equal (bool, integers) or within the dtype's tolerance (floats)
  mismatch         at least one output differs beyond tolerance, or in shape or dtype
  not_run          nothing was delegated, an earlier stage failed, or the eager run failed (there is nothing
                   to compare with: the result's error names the eager stage; partitioning and lowering ran)
  reference_error  the reference model rejected the TOSA graph or the program could not be executed
  vgf_error        a VGF target only: the delegates' `.vgf` files could not be run on the Vulkan device (the
                   scenario runner or the ML emulation layer refused); the reference model's numbers stand beside it
  unpredictable    the reference model ran the graph and returned TOSA_UNPREDICTABLE: the TOSA specification
                   leaves these inputs' result unpredictable (a REQUIRE of an operator fails, e.g. an integer ADD
                   that overflows); the error names the status, the operator and the reference model's words.
                   Not a mismatch: TOSA promises no number to compare with

crashed and timeout keep what was known before the child stopped (e.g. the partition decisions).

Compute nodes are call_function nodes other than getitem and quantize/dequantize,
which carry no computation of their own.

This module is the only one that spells these names, their colours (`COLOURS`), their one- or two-letter codes
in tables (`CODES`, `MARKS`) and which of them count as failures; every other module refers to the members.
"""

from __future__ import annotations

from enum import Enum


class Outcome(str, Enum):
    DELEGATED = "delegated"
    PARTIAL = "partial"
    FALLBACK = "fallback"
    LOWERING_ERROR = "lowering_error"
    VELA_ERROR = "vela_error"
    VGF_ERROR = "vgf_error"
    EXPORT_ERROR = "export_error"
    CRASHED = "crashed"
    TIMEOUT = "timeout"

    def __str__(self) -> str:
        return self.value


class Numerics(str, Enum):
    MATCH = "match"
    MISMATCH = "mismatch"
    NOT_RUN = "not_run"
    REFERENCE_ERROR = "reference_error"
    UNPREDICTABLE = "unpredictable"
    VGF_ERROR = "vgf_error"

    def __str__(self) -> str:
        return self.value


class Stage(str, Enum):
    """Where a case failed; recorded in ErrorInfo.stage."""

    EAGER = "eager"
    QUANTIZE = "quantize"
    EXPORT = "export"
    TO_EDGE = "to_edge"
    PARTITION = "partition"
    LOWERING = "lowering"
    VELA = "vela"  # Vela compiling a delegate's TOSA graph for an Ethos-U target
    VGF_COMPILE = "vgf_compile"  # model-converter compiling a delegate's TOSA graph for a VGF target
    REFERENCE = "reference"
    COMPARE = "compare"
    VGF_RUN = "vgf_run"  # the scenario runner running the delegates' .vgf files on the Vulkan device

    def __str__(self) -> str:
        return self.value


# What a failure in each stage makes of the case: an outcome (the case ends there), or, for the stages after
# lowering, the numerics (the outcome is what lowering placed).
# A failed eager run ends nothing: the case is lowered all the same and only the comparison is skipped.
FAILURE_OUTCOME: dict[Stage, Outcome] = {
    Stage.QUANTIZE: Outcome.EXPORT_ERROR,
    Stage.EXPORT: Outcome.EXPORT_ERROR,
    Stage.TO_EDGE: Outcome.LOWERING_ERROR,
    Stage.PARTITION: Outcome.LOWERING_ERROR,
    Stage.LOWERING: Outcome.LOWERING_ERROR,
    Stage.VELA: Outcome.VELA_ERROR,
    Stage.VGF_COMPILE: Outcome.VGF_ERROR,
}
FAILURE_NUMERICS: dict[Stage, Numerics] = {
    Stage.REFERENCE: Numerics.REFERENCE_ERROR,
    Stage.COMPARE: Numerics.REFERENCE_ERROR,
    Stage.VGF_RUN: Numerics.VGF_ERROR,
}

# Outcomes that mean the case did not get through, and numerics that mean the numbers are not to be trusted.
FAILED_OUTCOMES = frozenset({Outcome.LOWERING_ERROR, Outcome.VELA_ERROR, Outcome.VGF_ERROR, Outcome.EXPORT_ERROR,
                             Outcome.CRASHED, Outcome.TIMEOUT})
# Outcomes of a backend that accepted nodes it then could not compile: the culprit search looks for those nodes.
COMPILE_FAILURES = frozenset({Outcome.LOWERING_ERROR, Outcome.VELA_ERROR, Outcome.VGF_ERROR})
FAILED_NUMERICS = frozenset({Numerics.MISMATCH, Numerics.REFERENCE_ERROR, Numerics.UNPREDICTABLE, Numerics.VGF_ERROR})
# Outcomes of a child process that stopped: never cached, since running again may end differently.
STOPPED_OUTCOMES = frozenset({Outcome.CRASHED, Outcome.TIMEOUT})

COLOURS: dict[Outcome, str] = {
    Outcome.DELEGATED: "#4caf50",
    Outcome.PARTIAL: "#aed581",
    Outcome.FALLBACK: "#ff9800",
    Outcome.LOWERING_ERROR: "#e53935",
    Outcome.VELA_ERROR: "#ad1457",
    Outcome.VGF_ERROR: "#00838f",
    Outcome.EXPORT_ERROR: "#8e24aa",
    Outcome.CRASHED: "#5d4037",
    Outcome.TIMEOUT: "#546e7a",
}
CODES: dict[Outcome, str] = {
    Outcome.DELEGATED: "D",
    Outcome.PARTIAL: "P",
    Outcome.FALLBACK: "F",
    Outcome.LOWERING_ERROR: "LE",
    Outcome.VELA_ERROR: "VE",
    Outcome.VGF_ERROR: "GE",
    Outcome.EXPORT_ERROR: "EE",
    Outcome.CRASHED: "C",
    Outcome.TIMEOUT: "T",
}
MARKS: dict[Numerics, str] = {Numerics.MISMATCH: "X", Numerics.REFERENCE_ERROR: "!", Numerics.UNPREDICTABLE: "?",
                              Numerics.VGF_ERROR: "G!"}
# The colour of a numerics verdict where one is drawn (the explorer's status, a result's HTML page).
NUMERICS_COLOURS: dict[Numerics, str] = {
    Numerics.MATCH: "#4caf50",
    Numerics.MISMATCH: "#e53935",
    Numerics.NOT_RUN: "#9e9e9e",
    Numerics.REFERENCE_ERROR: "#8e24aa",
    Numerics.UNPREDICTABLE: "#f9a825",
    Numerics.VGF_ERROR: "#00838f",
}


def is_quantize_dequantize(target: str) -> bool:
    """Whether an edge target name is a quantize/dequantize op: no compute node (see the module docstring)."""
    return target.startswith("quantized_decomposed.") and ("quantize_per" in target or "dequantize_per" in target)
