"""The stack layer: everything that touches torch, executorch and the TOSA tools as they are installed.

- `loader`: imports the pinned stack once per process (torch, executorch's Arm backend, the reference model);
- `call_scope`: a workbench call, the only time the workbench changes anything in the process (the levers, quiet
  warnings and loggers), undone when it returns or raises;
- `arm_backend`: which Arm backend runs, the installed one or an executorch checkout's;
- `hooks`: the registry of hooks, one per private name a feature relies on (degrading or refusing), each
  registered by the module that reads the name, probed once per process, and their report for the doctor;
- `internals`: the private names of executorch and torch the pipeline reads, with their accessors and hooks;
- `levers`: the speed levers, one record each (`patches.Lever`), patched during calls only:
  `decomposition_cache` (torch.export's model-independent work, keyed on `registry_fingerprint`),
  `pass_construction` (executorch's passes without an empty GraphModule each, their tracers built on first read),
  `decomposition_tables` (decomposition tables built and split once per registry state), `rng_placeholders` (the
  rng tracker's placeholders without fake tensors), `graph_recompile` (GraphModule recompiles without compiling a
  source twice), `histogram_search` (the histogram observer's range search on floats, not 0-dim tensors),
  `provenance_sharing` (a node's provenance record extending its chain without copying it);
  `patches`: the undo stack they share;
  `pinned_sources`: the sources the levers (and the Arm test capture) were written for;
- `arm_test_census`, `arm_test_capture`, `arm_test_record`: executorch's Arm tests read as cases (which functions, from
  their source; how each is called; what it asserts);
- `conformance`: the TOSA conformance suite's compliance modes and its verifier, from the installed tosa-tools;
  `native_output`: where the reference model's and the verifier's own output goes;
- `tosa_debug`: the Arm backend's record of which TOSA operators each node became; `tosa_trace`: what the
  per-tensor trace needs of the stack; `recorder`: a stack function wrapped while a thread records its calls;
- `ethos_u`: Ethos-U targets and executorch's Ethos-U flow; `vela_capture`: each Vela compile as it happens;
  `vela_reports`: Vela's report files read;
- `profiles`: TOSA profile strings as executorch's TosaSpecification reads them;
- `versions`: the installed versions; `doctor`: all of the above in one report.
Imports only the core layer.
"""
