"""The core layer: the workbench's vocabulary and records, imported by every other layer and importing none.

- `outcomes`: Outcome, Numerics and Stage, with their colours and codes (the one place that spells them);
- `records`: CaseResult and its parts (plain data, JSON-safe), and the record of an Arm backend; `trace_row`, one
  row of a traced case;
- `rows`: one result as one table row (sweeps, views, text and reports all use it);
- `text`: results as plain text;
- `dtypes`: the dtypes a case can take and their tolerances;
- `failures`: an exception as an ErrorInfo naming its root cause, the pass or node visitor that raised and its node;
- `fingerprint`: a hash of user code (a Python policy's checks, a user's transform pass) for the cache key;
- `errors`: the errors for caller mistakes, and the one "nearest names" helper;
- `profile_table`: which TOSA profile strings the pinned executorch accepts, as data (held to its parser by
  tests/test_profiles.py), for checks that must not wait for executorch's import.

Also: `quantization` (the named quantization configurations), `vela` (what Vela reports about one compile), `vgf`
(the `.vgf` model-converter made of one delegate),
`backend_record` (which Arm backend produced a result), `unified_diff` (a patch read and applied to files in memory),
`cache_location` (the folder the workbench keeps what it computes once in),
`spec_check` (a result's TOSA graphs checked against the specification for its profile: the verdict).
Nothing here imports torch or executorch.
"""
