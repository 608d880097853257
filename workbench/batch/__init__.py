"""The batch layer: many cases at once, and what is done with their results.

- `matrix`: a matrix of cases (operators x dtypes x profiles x policies) as one value, and the presets;
- `sweeps`: a matrix swept in forked workers (`dask_runner`: on a Dask cluster), cached, and a whole model's
  summary under profiles x policies (`architecture_summary`);
- `cache`: one JSON file per case, keyed on everything that can change a verdict;
- `results_io`: sweep results as CSV or Parquet; `diffs`: what changed between two of them;
- `backends`: two Arm backends (checkouts or installed) checked, swept in their own processes, and diffed;
- `derive`: the EXT-INT64 candidate list from the catalogue; `suggest`: a suggested allowlist from a sweep.
- `culprits`: which accepted nodes break a lowering; `arm_tests`, `arm_test_verdicts`: executorch's Arm tests as
  cases, and whether the workbench agrees with them; `arm_test_coverage`: what of the tree was read, and why not
  the rest; `arm_test_cache`: their cached results; `arm_test_compare`: two Arm backends' tests compared.

Its modules beyond those: `hunt` (the counterexample hunt: programs drawn, run and judged by the partitioner's
contract), `hunt_space` (what a hunt draws and runs, and what it is judged against), `hunt_runner` (running a
hunt's cases through the cache, the pool or a Dask cluster), `hunt_contract` (the partitioner's contract: which
results break it, how badly), `hunt_findings` (the classes of findings, worst first, and their record),
`hunt_stats` (what a hunt did and returns),
`hunt_examples` (the classes a hunt remembers and replays first next time), `hunt_shrink` (the smallest program that still breaks the contract), `progress`
(the progress bar of a sweep, a hunt or a run of executorch's Arm tests), `model_summary` (a whole model's
partition as counts: delegates, CPU islands, int64 tensors crossing a delegate boundary;
`sweeps.architecture_summary` sweeps a catalogue entry under profiles x policies for them), `changed_cases`
(the result of each case a diff found changed, for its page beside an HTML report).
Imports core, stack, stages, catalogue, policies and pipeline.
"""
