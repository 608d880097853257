"""What the VGF compile of one delegate made: plain data, JSON-safe through `to_dict()` / `from_dict()`.

executorch's VGF backend hands each delegate's TOSA flatbuffer to Arm's ML SDK `model-converter`
(executorch/backends/arm/vgf/backend.py::vgf_compile), whose `.vgf` file becomes the delegate's processed bytes.
stack/vgf/converter_capture.py keeps each run; `vgf_dump` (the ML SDK's VGF library) reads the file's segments,
constants and resources (`vgf_dump -i FILE -o FILE.json`: `model_sequence.segments`, `constants`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

# How the name of a VGF target, as results record their profile, starts (stack/vgf/__init__.py parses them).
TARGET_PREFIX = "vgf:"


@dataclass(frozen=True)
class VgfSegment:
    """One segment of the file's model sequence: a graph the device runs (GRAPH: a Vulkan data graph of TOSA
    operators) or a compute shader (COMPUTE)."""

    name: str  # "graph_segment_0"
    kind: str  # "GRAPH" or "COMPUTE"
    inputs: int
    outputs: int

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class VgfFile:
    """One delegate's `.vgf` file as model-converter made it."""

    converter_version: str  # `model-converter --version`
    seconds: float  # the converter's run, as executorch's VGF backend ran it
    size_bytes: int
    segments: tuple[VgfSegment, ...]
    constants: int  # constant tensors the file holds (the graph's weights)
    flags: tuple[str, ...] = ()  # the converter flags executorch's compile spec passed

    def summary_line(self) -> str:
        kinds = ", ".join(f"{s.name} ({s.kind})" for s in self.segments) or "no segment"
        flags = f", flags {' '.join(self.flags)}" if self.flags else ""
        return (f"model-converter {self.converter_version}: {self.size_bytes / 1024:.1f} KiB in {self.seconds:.2f} s, "
                f"{len(self.segments)} segment(s): {kinds}; {self.constants} constant(s){flags}")

    def to_dict(self) -> dict:
        return {**{f.name: getattr(self, f.name) for f in fields(self)},
                "segments": [s.to_dict() for s in self.segments], "flags": list(self.flags)}

    @classmethod
    def from_dict(cls, data: dict) -> "VgfFile":
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["segments"] = tuple(VgfSegment(**s) for s in data.get("segments", ()))
        values["flags"] = tuple(data.get("flags", ()))
        return cls(**values)


def is_target(profile: str) -> bool:
    return profile.strip().lower().startswith(TARGET_PREFIX)


@dataclass(frozen=True)
class Agreement:
    """How one output's values from the two TOSA implementations of a VGF target compare, value by value: the
    reference model's (`outputs[i].reference`) against the VGF run's (`vgf_outputs[i].reference`). Exact, where
    the run's notes judge a disagreement by the output's tolerance (stages/vgf_run.py)."""

    index: int
    numel: int
    differing: int | None  # values that are not the same; None: the two cannot be compared (a side has none)
    max_difference: float | None  # the largest |reference model - VGF run| of numeric values

    def text(self) -> str:
        """'identical (24 values)', '3 of 24 values differ, max |difference| 0.0078', or why not compared."""
        if self.differing is None:
            return "not compared (one implementation gave no values)"
        if not self.differing:
            return f"identical ({self.numel} value{'s' * (self.numel != 1)})"
        largest = f", max |difference| {self.max_difference:g}" if self.max_difference is not None else ""
        return f"{self.differing} of {self.numel} values differ{largest}"


def agreements(outputs, vgf_outputs) -> list[Agreement]:
    """One Agreement per output both runs compared (OutputComparison records, matched by index)."""
    theirs = {o.index: o for o in vgf_outputs}
    return [_agreement(o.index, o.numel, o.reference, theirs[o.index].reference)
            for o in outputs if o.index in theirs]


def _agreement(index: int, numel: int, ours, theirs) -> Agreement:
    a, b = _flat(ours), _flat(theirs)
    if ours is None or theirs is None or len(a) != len(b):
        return Agreement(index, numel, None, None)
    differing = [(x, y) for x, y in zip(a, b) if not (x == y or (x != x and y != y))]  # NaN is NaN
    gaps = [abs(float(x) - float(y)) for x, y in differing if isinstance(x, (int, float)) and
            isinstance(y, (int, float))]
    return Agreement(index, len(a), len(differing), max(gaps) if gaps else (0.0 if not differing else None))


def _flat(values) -> list:
    if isinstance(values, (list, tuple)):
        return [v for item in values for v in _flat(item)]
    return [] if values is None else [values]
