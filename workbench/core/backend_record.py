"""Which Arm backend produced a result, as the result records it (chosen and described by stack/arm_backend.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

INSTALLED = "installed"  # ArmBackend.source of the installed executorch's backend
PATCHED = "patched"  # ArmBackend.source of a base with patches applied (stack/patched_backend.py)


@dataclass(frozen=True)
class ArmBackend:
    """Which Arm backend produced a result: the installed executorch's, the backends/arm of a checkout, or a base
    with patches applied (how one is chosen and described: stack/arm_backend.py, stack/patched_backend.py)."""

    source: str  # "installed", "checkout" or "patched"
    executorch: str  # the installed executorch core, which a checkout's backend runs against
    path: str | None = None  # the checkout's backends/arm folder (for a patched one: its built copy)
    commit: str | None = None  # git HEAD of the checkout; None when the folder is not in a git work tree
    dirty: bool | None = None  # uncommitted changes (untracked files included) under backends/arm
    content: str | None = None  # hash of the folder's files
    base: str | None = None  # a patched backend's base, as its label ("installed executorch 1.5.1", a checkout)
    branch: str | None = None  # the named branch a patched backend starts from (data/branches/)
    patches: tuple = ()  # a patched backend's patches in order: {"name", "sha256", "ignored"} each
    branch_patches: int = 0  # how many of `patches` the named branch itself brings
    argument: str | None = None  # a patched backend as --arm-backend asks for it again (see `rerun_argument`)

    @property
    def label(self) -> str:
        """One line for tables and reports, e.g. `checkout /src/executorch/backends/arm at 1a2b3c4d5e6f (dirty)`."""
        if self.source == INSTALLED:
            return f"installed executorch {self.executorch}"
        if self.source == PATCHED:
            chain = " + ".join([self.base or "?", *(f"{p['name']}@{p['sha256'][:8]}" for p in self.patches)])
            if not self.branch:
                return chain
            named = " + ".join([self.branch, *(p["name"] for p in self.patches[self.branch_patches:])])
            return f"{named} ({chain})"
        if self.commit is None:
            return f"checkout {self.path} (no git, content {self.content})"
        dirty = f" (dirty, content {self.content})" if self.dirty else ""
        return f"checkout {self.path} at {self.commit[:12]}{dirty}"

    @property
    def rerun_argument(self) -> str | None:
        """What `--arm-backend` (or use_arm_backend) takes to run on this backend again; None for the installed one."""
        if self.source == INSTALLED:
            return None
        return self.argument if self.source == PATCHED else self.path

    @property
    def cache_identity(self) -> str:
        """What the cache keys on: the files that run, not where they are or what git calls them; for a patched
        backend also what it was made of (base, branch, each patch's name and hash), which its results record."""
        if self.source == PATCHED:
            return f"patched content {self.content}: {self.label}"
        return self.label if self.source == INSTALLED else f"checkout content {self.content}"

    def to_dict(self) -> dict:
        found = asdict(self)
        found["patches"] = [dict(p) for p in self.patches]  # as JSON gives it back, so records compare equal
        return found

    @classmethod
    def from_dict(cls, data: dict) -> "ArmBackend":
        data = dict(data)
        data["patches"] = tuple(dict(p) for p in data.get("patches", ()))
        return cls(**data)


def label_of(recorded: dict) -> str:
    """The label of a backend as a result records it ("" for results from before backends were recorded)."""
    return ArmBackend.from_dict(recorded).label if recorded else ""
