"""The batch layer: many cases at once, and what is done with their results.

At its root, the engine and its values, which name no feature:
- `matrix`: a matrix of cases (operators x dtypes x profiles x policies) as one value, and the presets;
- `sweeps`: a matrix swept, and a whole model's summary under profiles x policies (`architecture_summary`);
- `runner`: the one runner of cases: the cache first, then the forked workers (`dask_runner`: a Dask cluster),
  then the results stored;
- `elsewhere`: the one way work runs on another Arm backend: a new process, JSON both ways;
- `cache`: one JSON file per case, keyed on everything that can change a verdict;
- `results_io`: sweep results as CSV or Parquet;
- `progress`: the progress bar of a sweep, a hunt or a run of executorch's Arm tests;
- `model_summary`: a whole model's partition as counts (delegates, CPU islands, int64 tensors crossing a delegate
  boundary).

Its rooms, each a package that names its own modules:
- `hunt/`: the counterexample hunt (programs drawn, run and judged by the partitioner's contract, classed, shrunk,
  remembered, and held against a baseline);
- `arm_tests/`: executorch's Arm tests as cases, whether the workbench agrees with them, what of the tree was read,
  their cache, and two Arm backends' tests compared;
- `comparisons/`: two sweeps diffed, the changed cases' results, two Arm backends checked and swept;
- `authoring/`: what helps write a policy (the EXT-INT64 candidate list, a suggested allowlist, the accepted nodes
  that break a lowering).
Imports core, stack, stages, catalogue, policies and pipeline.
"""
