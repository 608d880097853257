"""The batch layer: many cases at once, and what is done with their results.

- `sweeps`: the operator x dtype x profile matrix, in forked workers (`dask_runner`: on a Dask cluster);
- `cache`: one JSON file per case, keyed on everything that can change a verdict;
- `results_io`: sweep results as CSV or Parquet; `diffs`: what changed between two of them;
- `backends`: two Arm backends (checkouts or installed) checked, swept in their own processes, and diffed;
- `derive`: the EXT-INT64 candidate list from the catalogue; `suggest`: a suggested allowlist from a sweep.
- `model_runs`: one case under several profiles and policies with one export (whole results, for model summaries).
Imports core, stack, stages, catalogue, policies and pipeline.
"""
