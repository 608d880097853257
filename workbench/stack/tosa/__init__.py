"""The TOSA side of a lowering, and the TOSA tools as installed:

- `debug`: the Arm backend's own record of which TOSA operators each node became, read as it lowers;
- `trace`: what the per-tensor trace needs of the stack beyond its public API;
- `conformance`: the TOSA conformance suite's compliance modes and its verifier, from the installed tosa-tools;
- `native_output`: where the reference model's and the verifier's own output goes;
- `spec_alignment`: tosa-opt's strict specification alignment of a TOSA flatbuffer against a profile.
"""
