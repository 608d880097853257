# Set-up and jobs. Everything installs into .venv from pyproject.toml (the pinned stack).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup run review test test-fast test-browser bench bench-quick arm-tests findings clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Graphviz's `dot` draws the large partition graph; without it the explorer falls back to the matplotlib picture.
# Mesa's lavapipe is the Vulkan device VGF targets run on; without it a VGF case says so, every other target works.
setup: $(STAMP)
	bash scripts/ensure-graphviz.sh || [ "$$CI" != true ]
	bash scripts/ensure-vulkan.sh || [ "$$CI" != true ]
	! git rev-parse --git-dir >/dev/null 2>&1 || $(BIN)/nbstripout --install --attributes .gitattributes

# The main job: JupyterLab on the notebooks (the explorer is notebooks/00-explorer.ipynb), with the lab defaults
# of LAB_APP_SETTINGS (no news prompt; the browser tests use the same folder).
# PORT and LAB_ARGS may be set, e.g. `make run LAB_ARGS=--no-browser`.
PORT ?= 8888
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
LAB_APP_SETTINGS := jupyter/app-settings
run: setup
	$(BIN)/jupyter lab --notebook-dir=notebooks --LabApp.app_settings_dir=$(CURDIR)/$(LAB_APP_SETTINGS) \
		--port=$(PORT) $(ROOT_FLAG) $(LAB_ARGS)

# The EXT-INT64 review cases under TOSA-1.0+INT and TOSA-1.1+INT+int64, as a table in the terminal.
review: setup
	$(BIN)/workbench review

# Every test, the slow ones (whole catalogue through the real stack) included, then the browser tests.
test: setup
	bash scripts/ensure-browser.sh || [ "$$CI" != true ]
	$(BIN)/python -m pytest -n 2 --durations=15 -m "not browser"
	$(BIN)/python -m pytest -p no:xdist -m browser

# Only the quick tests.
test-fast: setup
	$(BIN)/python -m pytest -n 2 -m "not slow and not browser"

# The explorer notebook in JupyterLab, driven in headless Chromium (screenshots: $$WORKBENCH_ARTIFACTS/browser).
test-browser: setup
	bash scripts/ensure-browser.sh || [ "$$CI" != true ]
	$(BIN)/python -m pytest -p no:xdist -m browser

# The benchmark table (benchmarks/run.py), written with the machine's description to docs/benchmarks.md.
bench: setup
	$(BIN)/python benchmarks/run.py --markdown docs/benchmarks.md

# A smaller set of the same measurements, in about ten minutes; prints only.
bench-quick: setup
	$(BIN)/python benchmarks/run.py --quick

# executorch's whole Arm test tree read as cases and run on 2 workers: data/arm-tests.csv, data/arm-tests-unread.csv.
arm-tests: setup
	$(BIN)/python scripts/arm_tests_table.py

# The counterexample hunt on the installed executorch release under each target, 300 s each on 2 workers:
# data/executorch-findings.csv and .md.
findings: setup
	$(BIN)/python scripts/executorch_findings.py

clean:
	rm -rf $(VENV) .pytest_cache
