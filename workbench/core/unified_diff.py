"""Unified diffs (a pull request's `.diff`, `git diff`, `diff -ru`) read and applied to files in memory.

Applied strictly, as `patch --fuzz=0` does: every context and removed line must be found as written; a hunk may
sit at another line than its header says (the nearest place where it matches wins), since a branch's files move.
A hunk that matches nowhere is a `PatchError` naming the file, the hunk's number and header, and the first line
that differs at the header's place. Renames, copies and binary patches are refused by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import WorkbenchError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"
DEV_NULL = "/dev/null"


class PatchError(WorkbenchError):
    """A patch that cannot be read or does not apply."""


@dataclass(frozen=True)
class Hunk:
    header: str  # "@@ -23,7 +23,6 @@ ..." as written
    old_start: int  # 1-based line of the first old line (0 for an empty old side)
    old: tuple[str, ...]  # the context and removed lines, in order
    new: tuple[str, ...]  # the context and added lines, in order
    old_ends_without_newline: bool = False
    new_ends_without_newline: bool = False


@dataclass
class FilePatch:
    old_path: str | None  # None for a new file
    new_path: str | None  # None for a deleted file
    hunks: list[Hunk] = field(default_factory=list)
    source: str = "patch"  # the patch file's name, for messages

    @property
    def path(self) -> str:
        """The file it changes, relative to the tree's root (a/ and b/ prefixes removed)."""
        return self.new_path if self.new_path is not None else self.old_path


def _strip_prefix(raw: str) -> str | None:
    name = raw.split("\t", 1)[0].strip()
    if name == DEV_NULL:
        return None
    if name.startswith(("a/", "b/")):
        return name[2:]
    return name


def parse(text: str, name: str = "patch") -> list[FilePatch]:
    """The file patches of a unified diff, in order. Text before the first file header (a commit message, a
    provenance note) is ignored, as `git apply` ignores it."""
    lines = text.splitlines()
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(("rename from ", "copy from ", "GIT binary patch", "Binary files ")):
            raise PatchError(f"{name}: line {i + 1} is a rename, copy or binary patch ({line.strip()!r}); "
                             f"only changes of text files are applied")
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            current = FilePatch(_strip_prefix(line[4:]), _strip_prefix(lines[i + 1][4:]), source=name)
            files.append(current)
            i += 2
            while i < len(lines) and lines[i].startswith("@@"):
                hunk, i = _read_hunk(lines, i, name, current.path, len(current.hunks) + 1)
                current.hunks.append(hunk)
            continue
        i += 1
    if not files:
        raise PatchError(f"{name} holds no file change (no '--- a/...' / '+++ b/...' header): give a unified "
                         f"diff, as `git diff` or a pull request's .diff writes it")
    return files


def _read_hunk(lines: list[str], i: int, name: str, path: str, number: int) -> tuple[Hunk, int]:
    header = lines[i]
    match = _HUNK.match(header)
    if match is None:
        raise PatchError(f"{name}: {path}, hunk {number}: unreadable header {header!r}")
    old_count = int(match.group(2)) if match.group(2) is not None else 1
    new_count = int(match.group(4)) if match.group(4) is not None else 1
    old: list[str] = []
    new: list[str] = []
    flags = {"old": False, "new": False}
    last = None
    i += 1
    while i < len(lines) and (len(old) < old_count or len(new) < new_count or lines[i] == _NO_NEWLINE):
        line = lines[i]
        if line == _NO_NEWLINE:
            for side in (("old", "new") if last == " " else ("old",) if last == "-" else ("new",)):
                flags[side] = True
        elif line[:1] in (" ", "") and not line.startswith(("+", "-")):
            old.append(line[1:])
            new.append(line[1:])
            last = " "
        elif line.startswith("-"):
            old.append(line[1:])
            last = "-"
        elif line.startswith("+"):
            new.append(line[1:])
            last = "+"
        else:
            break
        i += 1
    if len(old) != old_count or len(new) != new_count:
        raise PatchError(f"{name}: {path}, hunk {number} ({header.strip()}): the header counts {old_count} old and "
                         f"{new_count} new lines, the hunk holds {len(old)} and {len(new)} (a truncated patch?)")
    return Hunk(header.strip(), int(match.group(1)), tuple(old), tuple(new), flags["old"], flags["new"]), i


def _find(lines: list[str], wanted: tuple[str, ...], near: int) -> int | None:
    """The start of `wanted` in `lines` nearest to `near`, or None."""
    if not wanted:
        return min(max(near, 0), len(lines))
    for distance in range(len(lines) + 1):
        for start in ((near - distance, near + distance) if distance else (near,)):
            if 0 <= start <= len(lines) - len(wanted) and tuple(lines[start:start + len(wanted)]) == wanted:
                return start
    return None


def _first_difference(lines: list[str], wanted: tuple[str, ...], start: int) -> str:
    for offset, expected in enumerate(wanted):
        at = start + offset
        found = lines[at] if 0 <= at < len(lines) else None
        if found != expected:
            shown = "the end of the file" if found is None else repr(found)
            return f"line {at + 1} is {shown}, the patch expects {expected!r}"
    return "it matches at its own place but overlaps an earlier hunk"


def apply(patch: FilePatch, text: str | None) -> str | None:
    """The file's text after `patch` (None: the patch deletes it). `text` is the file as it is (None: absent)."""
    name = patch.source
    if text is None and patch.old_path is not None:
        raise PatchError(f"{name}: {patch.path} does not exist in the base, and the patch changes it (it is no new "
                         f"file): the patch was made against another tree")
    if text is not None and patch.old_path is None:
        raise PatchError(f"{name}: {patch.path} already exists in the base, and the patch creates it")
    lines = text.split("\n") if text else []
    ends_with_newline = text.endswith("\n") if text else True
    if text and ends_with_newline:
        lines.pop()
    shift = 0
    position = 0
    for number, hunk in enumerate(patch.hunks, 1):
        near = max(hunk.old_start - 1 + shift, position) if hunk.old else hunk.old_start + shift
        start = _find(lines[position:], hunk.old, near - position)
        if start is None:
            raise PatchError(f"{name}: {patch.path}, hunk {number} ({hunk.header}) does not apply: "
                             f"{_first_difference(lines, hunk.old, max(hunk.old_start - 1, 0))}")
        start += position
        lines[start:start + len(hunk.old)] = list(hunk.new)
        shift += len(hunk.new) - len(hunk.old)
        position = start + len(hunk.new)
        if hunk.old_ends_without_newline or hunk.new_ends_without_newline:
            ends_with_newline = not hunk.new_ends_without_newline
    if patch.new_path is None:
        return None
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if ends_with_newline else "")
