"""Turn an exception from a stage into an ErrorInfo whose root cause is the innermost meaningful message.

executorch wraps lowering failures in pass-manager exceptions ("An error occurred when running the
'_ExportedProgramGraphPassAdapter' pass ...") chained over the real error; the user needs the real one.
"""

from __future__ import annotations

import re
import traceback

from .records import ErrorInfo

# executorch writes some sets of dtypes into its messages as Python prints them, in an order that changes from one
# process to the next ("{torch.bool, torch.float32}"); sorted, the same verdict always reads the same.
_DTYPE_LIST = re.compile(r"torch\.\w+(?:, torch\.\w+)+")


def stable_text(text: str) -> str:
    """`text` with every comma-separated run of torch names (a set executorch printed) in sorted order."""
    return _DTYPE_LIST.sub(lambda match: ", ".join(sorted(match.group(0).split(", "))), text)

_WRAPPER_PREFIXES = (
    "An error occurred when running the",
    "While executing",
)


def _chain(exc: BaseException) -> list[BaseException]:
    seen, chain = set(), []
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        chain.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return chain


def _first_line(exc: BaseException) -> str:
    for line in str(exc).splitlines():
        if line.strip():
            return stable_text(line.strip())
    return ""


def root_cause(exc: BaseException) -> tuple[str, str]:
    """(type name, message) of the innermost exception in the chain that is not a pass wrapper."""
    for candidate in reversed(_chain(exc)):
        line = _first_line(candidate)
        if line and not line.startswith(_WRAPPER_PREFIXES):
            return type(candidate).__name__, line
    return type(exc).__name__, _first_line(exc) or type(exc).__name__


def error_info(stage, exc: BaseException) -> ErrorInfo:
    cause_type, cause = root_cause(exc)
    return ErrorInfo(
        stage=str(stage),
        type=type(exc).__name__,
        message=str(exc),
        root_cause=cause,
        root_cause_type=cause_type,
        traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    )
