"""Run the model eagerly in PyTorch: the outputs every later result is compared with.

Where CPU PyTorch has no kernel for an fp8 dtype (convolution, pooling, gather on float8_e4m3fn: "... not
implemented for 'Float8_e4m3fn'"), the model runs again with each such call computed in float32 on the same values
and its floating-point results rounded back to the fp8 dtype of its inputs, and a note names each such call; every
other call runs as it is. Any other failure does not end the case (it is not fatal): the model may still export,
partition and lower, only the comparison is skipped, and the result says why.
"""

from __future__ import annotations

from ..core.outcomes import Stage
from ..stack import loader
from .spec import StageSpec
from .state import Prepared, copied, flatten_outputs

NAME = "eager"
ANNOUNCE = Stage.EAGER
NO_FP8_KERNEL = "not implemented for 'Float8"  # how CPU PyTorch refuses an fp8 dtype it has no kernel for


def run(state: Prepared) -> None:
    torch = loader.torch()
    try:
        with torch.no_grad():
            state.expected = flatten_outputs(state.module(*copied(state.inputs)))
        return
    except (RuntimeError, NotImplementedError) as exc:
        if NO_FP8_KERNEL not in str(exc):
            raise
    emulated: dict[str, str] = {}
    with torch.no_grad(), _fp8_in_float32(torch, emulated):
        state.expected = flatten_outputs(state.module(*copied(state.inputs)))
    for call, dtype in emulated.items():
        state.notes.append(f"eager PyTorch has no CPU kernel for {call} on {dtype}: computed in float32 on the same "
                           f"values and rounded to {dtype}")


def _fp8_in_float32(torch, emulated: dict):
    """A torch-function mode that computes a call refused for want of an fp8 kernel in float32 instead; `emulated`
    collects call name -> fp8 dtype."""
    from torch.overrides import TorchFunctionMode

    fp8 = (torch.float8_e4m3fn, torch.float8_e5m2)

    class Fp8InFloat32(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            try:
                return func(*args, **kwargs)
            except (RuntimeError, NotImplementedError) as exc:
                dtypes = [t.dtype for t in _leaves((args, kwargs)) if isinstance(t, torch.Tensor) and t.dtype in fp8]
                if NO_FP8_KERNEL not in str(exc) or not dtypes:
                    raise
            dtype = dtypes[0]
            widen = lambda a: a.to(torch.float32) if isinstance(a, torch.Tensor) and a.dtype in fp8 else a
            result = func(*_mapped(widen, args), **_mapped(widen, kwargs))
            emulated.setdefault(getattr(func, "__name__", str(func)), str(dtype).removeprefix("torch."))
            return _mapped(lambda r: r.to(dtype) if isinstance(r, torch.Tensor) and r.dtype.is_floating_point else r,
                           result)

    return Fp8InFloat32()


def _mapped(function, tree):
    """`function` applied to every leaf of nested lists, tuples and dicts (a named tuple keeps its type)."""
    if isinstance(tree, dict):
        return {k: _mapped(function, v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        items = [_mapped(function, v) for v in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    return function(tree)


def _leaves(tree) -> list:
    found = []
    _mapped(found.append, tree)
    return found


STAGE = StageSpec(NAME, ANNOUNCE, run, fatal=False)
