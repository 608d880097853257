"""The stages layer: one module per step of a case, in the order the pipeline runs them.

A stage is a module that ends with its `STAGE`, a `StageSpec` (spec.py): its name in the pipeline's sequence and
in a result's timings, the stage told to observers when it starts and recorded in its errors, its `run(state)`,
and what it may leave to the defaults: whether it applies to a case, whether its failure ends the case, what that
failure makes of it, the core Stage it is recorded under, the stages it runs inside it.
The pipeline (pipeline/sequence.py) runs the stages, times them and is the one place that catches their failures.

Profile-independent stages (eager, quantize, export) work on a `Prepared`; per-profile stages (lower, reference,
compare, compliance, vgf_run) on a `Lowering`. partition.py, transform_passes.py and tosa_flatbuffer.py are helpers
of the lower stage.

The stage modules: `eager`, `quantize`, `export` (profile-independent), `lower`, `spec_check` (each delegate's TOSA
graph against the specification for the profile), `reference`, `compare`, `compliance`, `vgf_run` (a VGF target's
delegates run on the Vulkan device and compared), `trace` (per profile); `state` (what they build up: `Prepared`,
`Lowering`); the lower stage's helpers `tosa_provenance` (which TOSA operators each delegated node became) and the
trace's `trace_match`, `trace_expectation`, `trace_layout`, `trace_scales` (what each traced tensor is judged
against, laid out and scaled as the TOSA tensor is) and `trace_folded` (a node folded away, judged on the tensor that
stands for it).
Imports only core and stack.
"""
