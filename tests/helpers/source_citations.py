"""Source citations in the notebooks and the documentation, and whether the installed stack still has them.

A citation is `<package>/<path>.py` (the file must exist in the installed package) or `<package>/<path>.py::Name`
(the file must also still contain `Name`; a dotted `Class.method` needs each part). The packages are those of the
pinned stack: executorch, torch, torchao, tosa-tools' modules and Vela's (ethosu).
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("executorch", "torch", "torchao", "tosa_tools", "tosa_serializer", "tosa_reference_model", "checker",
            "ethosu")
CITATION = re.compile(rf"(?<![\w/])((?:{'|'.join(PACKAGES)})/[\w/.-]*?\.py)(?:::([A-Za-z_][\w.]*))?")
DOCUMENTS = ("README.md", "docs/*.md", "data/README.md", "notebooks/*.ipynb", "notebooks/README.md")


@dataclass(frozen=True)
class Citation:
    document: str
    path: str  # package/relative/path.py
    name: str | None


def document_texts(repo: Path = REPO) -> dict[str, str]:
    """Each document's text; a notebook's is its cells' sources (markdown and code), outputs left out."""
    texts = {}
    for pattern in DOCUMENTS:
        for path in sorted(repo.glob(pattern)):
            if path.suffix == ".ipynb":
                cells = json.loads(path.read_text())["cells"]
                texts[str(path.relative_to(repo))] = "\n".join("".join(c["source"]) for c in cells)
            else:
                texts[str(path.relative_to(repo))] = path.read_text()
    return texts


def citations(texts: dict[str, str]) -> list[Citation]:
    return [Citation(document, match.group(1), match.group(2))
            for document, text in texts.items() for match in CITATION.finditer(text)]


def package_root(package: str) -> Path | None:
    """The folder the installed package's files are in (its parent for a package, the module's for a module)."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0]).parent
    return Path(spec.origin).parent


def problem(citation: Citation, roots: dict[str, Path | None]) -> str | None:
    """What is wrong with a citation against the installed files under `roots` (package -> folder), or None."""
    package = citation.path.split("/", 1)[0]
    root = roots.get(package)
    file = root / citation.path if root is not None else None
    if file is None or not file.is_file():
        return f"{citation.document}: {citation.path} is not a file of the installed {package}"
    if citation.name:
        text = file.read_text(errors="replace")
        missing = [part for part in citation.name.split(".") if not re.search(rf"\b{re.escape(part)}\b", text)]
        if missing:
            return f"{citation.document}: {citation.path} no longer contains {', '.join(missing)}"
    return None
