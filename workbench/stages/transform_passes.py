"""Extra transform passes for the lowering, as executorch's own Arm test pipelines add them.

For example `InsertInt32CastsAfterInt64PlaceholdersPass` narrows int64 index placeholders to int32 so that
gather, embedding, index_put or index_copy can be delegated: one of the ways executorch itself gets int64 indices
onto TOSA. A pass is given by name (one of executorch.backends.arm._passes: `names()`), as a pass class, or as an
instance. A class is built anew for every lowering, so it must take no required argument (executorch's own tests
use InsertInt32CastsAfterInt64PlaceholdersPass, ConvertInt64ConstOpsToInt32Pass and
ConvertInt64OutputOpsToInt32Pass); an instance is used as it is.
"""

from __future__ import annotations

import inspect

from ..core.errors import WorkbenchError, unknown_name
from ..core.fingerprint import code_fingerprint
from ..stack import internals


def names() -> list[str]:
    """The names of the Arm backend's passes (what `transform_passes=[...]` and --transform-pass take by name)."""
    return internals.arm_pass_names()


def resolve(passes) -> tuple:
    """Names to pass classes; classes and instances as given. Raises a WorkbenchError for an unknown name."""
    if passes is None:
        return ()
    if isinstance(passes, (str, type)) or not isinstance(passes, (list, tuple)):
        passes = [passes]
    resolved = []
    for item in passes:
        if isinstance(item, str):
            try:
                item = internals.arm_pass(item)
            except KeyError:
                raise WorkbenchError(unknown_name("transform pass", item, names(),
                                                  listed="`workbench passes` lists the Arm backend's passes")) from None
        _check_constructible(item)
        resolved.append(item)
    return tuple(resolved)


def _check_constructible(item) -> None:
    if not isinstance(item, type):
        return
    required = [name for name, parameter in list(inspect.signature(item.__init__).parameters.items())[1:]
                if parameter.default is parameter.empty and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD,
                                                                               parameter.KEYWORD_ONLY)]
    if required:
        # e.g. CastInt64BuffersToInt32Pass(exported_program): it needs the edge program, which exists only inside
        # the lowering; built with the exported program it would edit the wrong one.
        raise WorkbenchError(f"transform pass {item.__name__} needs {', '.join(required)} to be built, which the "
                             "lowering does not hand to transform passes; give an instance you built yourself, "
                             "or a pass without required arguments")


def class_names(passes) -> tuple[str, ...]:
    """What a result records: each pass's class name."""
    return tuple(p.__name__ if isinstance(p, type) else type(p).__name__ for p in resolve(passes))


def fingerprint(passes) -> str | None:
    """What the cache keys passes on: the Arm backend's by name (its files are in the key), a user's by its code;
    None when a user's pass has no readable source."""
    parts = []
    for item in resolve(passes):
        cls = item if isinstance(item, type) else type(item)
        if cls.__module__.startswith("executorch.backends.arm."):
            parts.append(cls.__name__)
            continue
        code = code_fingerprint(item)
        if code is None:
            return None
        parts.append(f"{cls.__module__}.{cls.__qualname__}:{code}")
    return ",".join(parts)


def instances(passes) -> list:
    """The passes for one lowering: each class built anew, instances as given."""
    return [item() if isinstance(item, type) else item for item in resolve(passes)]
