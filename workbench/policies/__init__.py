"""Partition policies: named sets of extra partition checks injected into TOSAPartitioner.

A policy never patches executorch; its checks go in through `TOSAPartitioner(compile_spec,
additional_checks=[...])`, where a check that returns False keeps a node on CPU.

Built in:
- `stock`: no extra check, exactly what the installed executorch does.
- `ext-int64-allowlist`: under a profile that declares int64, only operators on the candidate list (`ops`,
  edge operator names) may carry int64, and only with uniform width: an int64 data operand next to an int32 or
  bool data operand (e.g. in `cat`) falls back; the bool condition of `where` is not a data operand. Every other
  operator keeps the behaviour it has without the extension: executorch's own int64 check, with its safe
  exceptions. Under profiles without int64 it adds nothing. The default list is derived from the TOSA 1.1
  specification and the installed lowering (see specification.py).

Build your own with `allowlist(name, ops)`, `policy.with_ops(add=..., remove=...)`, or `load(path)` from a
TOML or YAML file: `name = "mine"`, `ops = ["aten.add.Tensor", ...]`, optional `description`.
"""

from ..core.fingerprint import code_fingerprint
from .policy import Policy, allowlist
from .registry import STOCK, get, load, names, register

__all__ = ["Policy", "STOCK", "allowlist", "code_fingerprint", "get", "load", "names", "register"]
