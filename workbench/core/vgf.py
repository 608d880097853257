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
