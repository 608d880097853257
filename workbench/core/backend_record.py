"""Which Arm backend produced a result, as the result records it (chosen and described by stack/arm_backend.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

INSTALLED = "installed"  # ArmBackend.source of the installed executorch's backend


@dataclass(frozen=True)
class ArmBackend:
    """Which Arm backend produced a result: the installed executorch's, or the backends/arm of a checkout
    (how one is chosen and described: stack/arm_backend.py)."""

    source: str  # "installed" or "checkout"
    executorch: str  # the installed executorch core, which a checkout's backend runs against
    path: str | None = None  # the checkout's backends/arm folder
    commit: str | None = None  # git HEAD of the checkout; None when the folder is not in a git work tree
    dirty: bool | None = None  # uncommitted changes (untracked files included) under backends/arm
    content: str | None = None  # hash of the folder's files

    @property
    def label(self) -> str:
        """One line for tables and reports, e.g. `checkout /src/executorch/backends/arm at 1a2b3c4d5e6f (dirty)`."""
        if self.source == INSTALLED:
            return f"installed executorch {self.executorch}"
        if self.commit is None:
            return f"checkout {self.path} (no git, content {self.content})"
        dirty = f" (dirty, content {self.content})" if self.dirty else ""
        return f"checkout {self.path} at {self.commit[:12]}{dirty}"

    @property
    def cache_identity(self) -> str:
        """What the cache keys on: the files that run, not where they are or what git calls them."""
        return self.label if self.source == INSTALLED else f"checkout content {self.content}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ArmBackend":
        return cls(**data)


def label_of(recorded: dict) -> str:
    """The label of a backend as a result records it ("" for results from before backends were recorded)."""
    return ArmBackend.from_dict(recorded).label if recorded else ""
