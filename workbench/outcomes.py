"""The outcome vocabulary of a case, defined in one place.

Outcome (what the partitioner and lowering did):
  delegated       every compute node ended in TOSA delegates
  partial         some compute nodes delegated, some left on CPU
  fallback        nothing delegated and no error: the whole program runs on CPU
  lowering_error  conversion to edge, partitioning or TOSA lowering raised
                  (typically: the partitioner accepted a node that lowering cannot carry)
  export_error    the model could not be run eagerly, quantized or exported with torch.export
  crashed         the isolated child process running the case was killed by a signal (e.g. SIGSEGV in
                  native code); the error names the signal and the stage it was in
  timeout         the case ran past its time limit and its child process was stopped; the error names the stage

Numerics (what the TOSA reference model computed against eager PyTorch):
  match            every output equal (bool, integers) or within the dtype's tolerance (floats)
  mismatch         at least one output differs beyond tolerance, or in shape or dtype
  not_run          nothing was delegated, or an earlier stage failed
  reference_error  the reference model rejected the TOSA graph or the program could not be executed

crashed and timeout keep what was known before the child stopped (e.g. the partition decisions).

Compute nodes are call_function nodes other than getitem and quantize/dequantize,
which carry no computation of their own.
"""

from __future__ import annotations

from enum import Enum


class Outcome(str, Enum):
    DELEGATED = "delegated"
    PARTIAL = "partial"
    FALLBACK = "fallback"
    LOWERING_ERROR = "lowering_error"
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
    REFERENCE = "reference"

    def __str__(self) -> str:
        return self.value
