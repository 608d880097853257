"""The stack layer: everything that touches torch, executorch and the TOSA tools as they are installed.

- `loader`: imports the pinned stack once per process (torch, executorch's Arm backend, the reference model);
- `arm_backend`: which Arm backend runs, the installed one or an executorch checkout's;
- `internals`: every private name of executorch and torch the workbench uses, checked when the stack loads;
- `levers`: the speed levers, each switchable and guarded: `decomposition_cache` (torch.export's
  model-independent work, keyed on `registry_fingerprint`), `pass_construction` (executorch's passes without an
  empty GraphModule each, their tracers built on first read), `decomposition_tables` (decomposition tables built
  and split once), `rng_placeholders` (the rng tracker's placeholders without fake tensors), `graph_recompile`
  (GraphModule recompiles without compiling a source twice), `provenance_copies` (fx provenance records copied
  without deepcopy's general machinery), `warm_parent` (forked workers start warm), `worker_reuse` (sweep
  workers run group after group), and the `switch` they share;
  `pinned_sources`: the sources the levers were written for;
- `profiles`: TOSA profile strings as executorch's TosaSpecification reads them;
- `versions`: the installed versions; `doctor`: all of the above in one report.
Imports only the core layer.
"""
