"""The stack layer: everything that touches torch, executorch and the TOSA tools as they are installed.

At its root, the accessors of the stack and the registry of its hooks:
- `loader`: imports the pinned stack once per process (torch, executorch's Arm backend, the reference model);
- `call_scope`: a workbench call, the only time the workbench changes anything in the process (the levers, quiet
  warnings and loggers), undone when it returns or raises;
- `arm_backend`: which Arm backend runs, the installed one or an executorch checkout's;
- `patched_backend`: an Arm backend given as BASE+PATCH..., built once into the cache folder;
- `branches`: the named branches the repository carries (data/branches/), each a patch on a base;
- `hooks`: the registry of hooks, one per private name a feature relies on (degrading or refusing), each
  registered by the module that reads the name, probed once per process, and their report for the doctor;
- `internals`: the private names of executorch and torch the pipeline reads, with their accessors and hooks;
- `patches`: the undo stack a call's changes share, and the records of what a lever patches;
- `recorder`: a stack function wrapped while a thread records its calls;
- `pinned_sources`: the sources the levers and the Arm test capture were written for;
- `profiles`: TOSA profile strings as executorch's TosaSpecification reads them;
- `support_lists`: the edge operators the loaded Arm backend claims (its support lists and registered checks);
- `versions`: the installed versions; `doctor`: all of the stack in one report.

Its rooms, each a package that names its own modules:
- `levers/`: the speed levers, patched during calls only, and their switchboard (`levers.SPEED`);
- `arm_tests/`: executorch's Arm tests read as cases (which functions, from their source; how each is called; what
  it asserts);
- `ethos_u/`: Ethos-U targets and executorch's Ethos-U flow, each Vela compile and Vela's reports;
- `vgf/`: VGF targets and executorch's VGF flow, each model-converter run, Arm's ML SDK tools and a `.vgf` run on
  the Vulkan device;
- `tosa/`: the Arm backend's record of the TOSA operators each node became, what the per-tensor trace needs, the
  TOSA conformance suite's compliance modes and verifier, and where native output goes.
Imports only the core layer.
"""
