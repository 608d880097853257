"""executorch's own Arm tests as a case source, and the workbench's agreement with them.

- `suite`: the tests of a selection read as cases (`from_arm_tests`) and run (`run_arm_tests`), here or on another
  Arm backend, with the agreement text;
- `selection`: which test files a selection names, in which backend's test folder;
- `dask`: the tests on a Dask cluster, one task per test file;
- `verdicts`: whether the workbench's verdict agrees with what a test expects, and why not;
- `coverage`: what of the test tree was read, and why not the rest;
- `cache`: their cached records and results, and their keys;
- `compare`: two Arm backends' tests compared.
"""
