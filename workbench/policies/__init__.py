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

- `ext-int64-first-draft`: as the EXT-INT64 change's first version, under +int64 it *accepts* slice_copy and
  where on int64 over executorch's own checks (accept rules: accepts.py).
- `ext-int64-part2`: the allowlist of data/ext-int64-allowlist-part2.toml (part 2, reconstructed from the review
  thread's description).

Build your own with `allowlist(name, ops)`, `policy.with_ops(add=..., remove=...)`, `accepting(name, accepts)`,
`policy.with_accepts(accepts)`, `from_source(path.py, VARIABLE)` (a list in a Python file, not imported), or
`load(path)` from a TOML or YAML file: `name = "mine"`, `ops = ["aten.add.Tensor", ...]` and/or `accepts`,
optional `description`. Wherever a policy is taken, 'path.py:VARIABLE' means from_source.

Its modules: `policy` (a named set of extra partition checks and its fingerprint), `registry` (policies by
name, file or variable), `int64_allowlist` (the EXT-INT64 allowlist's check), `source_lists` (a branch's operator
list read without importing it), `reasons` (the words of a reason a policy decided).
"""

from .accepts import AcceptRule
from .policy import Policy, accepting, allowlist
from .registry import STOCK, get, load, names, register
from .source_lists import from_source

__all__ = ["AcceptRule", "Policy", "STOCK", "accepting", "allowlist", "from_source", "get",
           "load", "names", "register"]
