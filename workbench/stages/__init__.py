"""The stages layer: one module per step of a case, in the order the pipeline runs them.

A stage is a module with
    NAME            its name in the pipeline's sequence and in a result's timings;
    ANNOUNCE        the stage told to observers when it starts and recorded in its errors (a core Stage, or the
                    stage's own name);
    run(state)      its work on the case's state (state.py); it raises when it fails;
and optionally
    applies(state)       whether it runs for this case (default: always);
    failed_stage(state)  the core Stage a failure is recorded under (default: ANNOUNCE);
    FATAL                False when the case goes on after its failure (default: True);
    FAILS_AS             the Outcome or Numerics its failure makes of the case (default: core.outcomes' table).
The pipeline (pipeline/sequence.py) runs the stages, times them and is the one place that catches their failures.

Profile-independent stages (eager, quantize, export) work on a `Prepared`; per-profile stages (lower, reference,
compare, compliance) on a `Lowering`. partition.py, transform_passes.py and tosa_flatbuffer.py are helpers of the lower
stage. Imports only core
and stack.
"""
