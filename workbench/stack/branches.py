"""The named branches the repository carries (data/branches/branches.toml): each a patch on a base, with its
provenance, usable wherever an Arm backend is taken (`--arm-backend ext-int64-lowering`).

A branch's base is `installed` or another named branch, so a branch is a chain of patches on the installed backend.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import WorkbenchError, unknown_name
from ..core.records import INSTALLED

FOLDER = Path(__file__).resolve().parents[2] / "data" / "branches"
REGISTRY = FOLDER / "branches.toml"


@dataclass(frozen=True)
class Branch:
    name: str
    base: str  # "installed" or another branch's name
    patch: Path  # a unified diff against executorch's tree
    provenance: Path  # what it reconstructs, from which facts, and the licence of the lines it carries
    description: str

    def to_dict(self) -> dict:
        return {"name": self.name, "base": self.base, "patch": self.patch.name, "provenance": self.provenance.name,
                "description": self.description}


@functools.lru_cache(maxsize=1)
def _registry() -> dict[str, Branch]:
    if not REGISTRY.is_file():
        return {}
    table = tomllib.loads(REGISTRY.read_text())
    return {name: Branch(name, entry.get("base", INSTALLED), FOLDER / entry["patch"], FOLDER / entry["provenance"],
                         entry.get("description", "")) for name, entry in table.items()}


def names() -> list[str]:
    return sorted(_registry())


def get(name: str) -> Branch | None:
    return _registry().get(name)


def patch_chain(name: str) -> list[Path]:
    """The patches that make branch `name` from the installed backend, base first."""
    chain: list[Path] = []
    seen: set[str] = set()
    while name != INSTALLED:
        branch = get(name)
        if branch is None:
            raise WorkbenchError(unknown_name("named branch", name, names()))
        if name in seen:
            raise WorkbenchError(f"named branch {name!r} is its own base ({REGISTRY.name} has a cycle)")
        seen.add(name)
        chain.insert(0, branch.patch)
        name = branch.base
    return chain
