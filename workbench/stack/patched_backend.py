"""An Arm backend given as `BASE+PATCH[+PATCH...]`: unified diffs applied in order onto a copy of a base's
backends/arm, built once into the cache folder and then run as a checkout is (stack/arm_backend.py).

BASE is `installed`, an executorch checkout (or its backends/arm) or a named branch (stack/branches.py, itself a
chain of patches on the installed backend); each PATCH is a unified diff against executorch's tree, as a pull
request's `.diff` is. Every patch is read and applied in memory before anything is copied, so a patch that does not
apply is one message naming the file and hunk before any case runs. Changes to files outside backends/arm are
ignored and named (a warning, and the record). The copy is kept under the hash of the base's files and the
patches' text, next to a record of what made it (`BUILD_RECORD`), which `arm_backend.describe` reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..core import unified_diff
from ..core.cache_location import default_dir
from ..core.errors import WorkbenchError
from ..core.records import INSTALLED
from . import branches

ARM_PREFIX = "backends/arm/"
BUILD_RECORD = "workbench-backend.json"  # beside the built backends/ folder
SEPARATOR = "+"


class PatchWarning(UserWarning):
    """A patch changes files the Arm backend does not hold; those changes are ignored."""


@dataclass(frozen=True)
class PatchedSpec:
    text: str  # as the user gave it
    base: str  # "installed" or a checkout's path
    branch: str | None  # the named branch the text starts with
    patches: tuple[Path, ...]  # the branch's chain first, then the text's own patches

    @property
    def argument(self) -> str:
        """The same backend as `--arm-backend` takes it from any folder: the branch or base, then the patches it
        adds, as absolute paths."""
        own = self.patches[len(branches.patch_chain(self.branch)):] if self.branch else self.patches
        return SEPARATOR.join([self.branch or self.base, *map(str, own)])


def parse(text: str) -> PatchedSpec | None:
    """The patched backend `text` names, or None when it names a plain one (`installed`, a checkout's folder).
    Raises WorkbenchError for a patch that is no file."""
    if text == INSTALLED or Path(text).expanduser().is_dir():
        return None
    head, *extras = text.split(SEPARATOR)
    branch = head if head in branches.names() else None
    if branch is None and not extras:
        return None  # neither a folder nor a branch: arm_backend.resolve_folder says what would be valid
    for extra in extras:
        if not Path(extra).expanduser().is_file():
            raise WorkbenchError(f"patch {extra!r} in Arm backend {text!r} is not a file; give BASE+PATCH[+PATCH...]: "
                                 f"BASE '{INSTALLED}', an executorch checkout or a named branch "
                                 f"({', '.join(branches.names()) or 'none'}), each PATCH a unified diff file")
    chain = branches.patch_chain(branch) if branch else []
    base = INSTALLED if branch or head == INSTALLED else str(Path(head).expanduser().resolve())
    return PatchedSpec(text, base, branch, tuple(chain) + tuple(Path(e).expanduser().resolve() for e in extras))


def _applied(base_folder: Path, spec: PatchedSpec) -> tuple[dict[str, str | None], list[dict]]:
    """The backend's changed files (relative to backends/arm; None: deleted) and a record per patch."""
    changed: dict[str, str | None] = {}
    records = []
    for patch in spec.patches:
        text = patch.read_text()
        ignored = []
        file_patches = unified_diff.parse(text, patch.name)
        for file_patch in file_patches:
            if not file_patch.path.startswith(ARM_PREFIX):
                ignored.append(file_patch.path)
                continue
            name = file_patch.path[len(ARM_PREFIX):]
            current = changed[name] if name in changed else _read(base_folder / name)
            changed[name] = unified_diff.apply(file_patch, current)
        if len(ignored) == len(file_patches):  # a diff made from another folder would change nothing
            raise WorkbenchError(f"{patch.name} changes no file under backends/arm (it changes {', '.join(ignored)}): "
                                 f"make the diff from executorch's root, so that its paths read "
                                 f"a/backends/arm/... and b/backends/arm/...")
        if ignored:
            warnings.warn(f"{patch.name}: ignored its changes to {len(ignored)} file(s) outside backends/arm: "
                          f"{', '.join(ignored)}", PatchWarning, stacklevel=4)
        records.append({"name": patch.name, "sha256": hashlib.sha256(text.encode()).hexdigest(),
                        "ignored": ignored})
    return changed, records


def _read(path: Path) -> str | None:
    return path.read_text() if path.is_file() else None


def build(spec: PatchedSpec, base_folder: Path, base_record: dict, base_content: str) -> Path:
    """The backends/arm folder of `spec`, built under the cache folder unless it is there already."""
    digest = hashlib.sha256(base_content.encode())
    digest.update(f"\0{spec.branch}".encode())
    for patch in spec.patches:  # the names too: the built folder's record names them
        digest.update(f"\0{patch.name}\0".encode() + patch.read_bytes())
    root = default_dir() / "arm-backends" / digest.hexdigest()[:16]
    folder = root / "backends" / "arm"
    if (root / BUILD_RECORD).is_file():
        return folder
    changed, records = _applied(base_folder, spec)
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{root.name}-", dir=root.parent))
    try:
        shutil.copytree(base_folder, staging / "backends" / "arm", ignore=shutil.ignore_patterns("__pycache__"))
        for name, text in changed.items():
            target = staging / "backends" / "arm" / name
            if text is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        record = {"spec": spec.text, "argument": spec.argument, "base": base_record, "branch": spec.branch,
                  "patches": records}
        (staging / BUILD_RECORD).write_text(json.dumps(record, indent=1))
        try:
            os.rename(staging, root)
        except OSError:  # another process built the same backend first: its copy is the same
            if not (root / BUILD_RECORD).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def build_record(folder: Path) -> dict | None:
    """What made a built backends/arm folder, or None for any other folder."""
    path = folder.parent.parent / BUILD_RECORD
    return json.loads(path.read_text()) if path.is_file() else None
