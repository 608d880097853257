"""What helps write a policy.

- `derive`: the EXT-INT64 candidate list from the catalogue;
- `suggest`: a suggested allowlist from a sweep;
- `culprits`: which accepted nodes break a lowering.
"""
