"""executorch's own Arm tests (executorch/backends/arm/test/) read as cases:

- `census`: every test function of the Arm test files and the pipeline it builds, read from the source without
  importing it;
- `capture`: the tests run up to their pipelines, so that each parametrization becomes a case: the one module that
  imports executorch's test suite;
- `marks`: a test function's parametrizations and the skip / xfail that holds for each, as pytest reads them;
- `record`: one such case (`ArmTestCase`), and how what the capture caught becomes one (`fold`).
"""
