"""executorch's own Arm tests as a case source, and the workbench's agreement with them.

- `suite`: the tests of a selection read as cases (`from_arm_tests`) and run (`run_arm_tests`), with the agreement
  text;
- `verdicts`: whether the workbench's verdict agrees with what a test expects, and why not;
- `coverage`: what of the test tree was read, and why not the rest;
- `cache`: their cached records and results;
- `compare`: two Arm backends' tests compared.
"""
