"""A case's TOSA graphs checked against the TOSA specification for its profile: plain data, JSON-safe.

tosa-tools' `tosa-opt` deserializes each delegate's TOSA flatbuffer, attaches the profile as a target environment
(specification version, profiles, extensions, level) and validates with `--tosa-validate=strict-op-spec-alignment`
(stack/tosa/spec_alignment.py runs it; stages/spec_check.py over every delegate). `legal` is True when every
delegate's graph passed, False when one failed (`message`: tosa-opt's first error line, `delegate`: whose), None
when the check could not run (`message` says why: tosa-opt missing, a flatbuffer missing, ...).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SpecCheck:
    legal: bool | None
    message: str = ""  # tosa-opt's first error line, or why the check could not run; "" when legal
    delegate: str | None = None  # the delegate the verdict is about (the first illegal one, or one not checked)
    target: str = ""  # the target environment checked against: "specification_version=1.0 profiles=pro_int ..."
    delegates: int = 0  # how many delegates' graphs were checked

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> "SpecCheck | None":
        return None if data is None else cls(**data)

    @property
    def verdict(self) -> str:
        """`legal`, `illegal` or `not checked`: the word for tables and pages."""
        return {True: "legal", False: "illegal", None: "not checked"}[self.legal]

    def one_line(self) -> str:
        """`legal (2 delegates; specification_version=1.0 profiles=pro_int)`, `illegal: delegate_0: 'tosa.clamp' op
        illegal: ...`, `not checked: tosa-opt not found ...`."""
        if self.legal:
            return f"legal ({self.delegates} delegate{'s' if self.delegates != 1 else ''}; {self.target})"
        where = f"{self.delegate}: " if self.delegate else ""
        return f"{self.verdict}: {where}{self.message}" + (f" (against {self.target})" if self.target else "")


def worst(checks: list[SpecCheck]) -> SpecCheck | None:
    """One verdict over the delegates: the first illegal one, else the first that could not be checked, else legal
    (None without any delegate)."""
    if not checks:
        return None
    for legal in (False, None):
        found = next((c for c in checks if c.legal is legal), None)
        if found is not None:
            return SpecCheck(found.legal, found.message, found.delegate, found.target, len(checks))
    return SpecCheck(True, "", None, checks[0].target, len(checks))


def column(check: SpecCheck | None):
    """The sweep column `spec_legal`: True, False, or None (not checked, or nothing delegated)."""
    return None if check is None else check.legal
