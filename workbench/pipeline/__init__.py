"""The pipeline layer: a case through the stages, in one process or in a child process.

- `sequence`: the named sequence of stages and the one place that catches their failures;
- `case`: run_case, run_model, and a case under several profiles with one export (`run_group`);
- `isolation`: a case, or a stream of cases, in forked children, so a crash or a hang costs one case.
Imports core, stack, stages, catalogue and policies.
"""
