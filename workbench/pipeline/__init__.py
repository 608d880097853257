"""The pipeline layer: a case through the stages, in one process or in a child process.

- `case`: the Case value (what one run is), made and checked once;
- `run`: run, run_case, run_model, and cases sharing one export (`Exports`, `run_group`);
- `sequence`: the named sequence of stages and the one place that catches their failures;
- `isolation`: a case, or a stream of cases, in forked children, so a crash or a hang costs one case;
  `worker_memory`: each worker's memory bound and what it holds.
Imports core, stack, stages, catalogue and policies.
"""
