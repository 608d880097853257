"""A lever's environment variable as a fresh process sees it: the variable set (or unset), a probe run, its answer."""

import json
import os
import subprocess
import sys


def probe_with_environment(probe: str, variable: str, value: str | None) -> dict:
    """Run the Python code `probe` in a new process with `variable` set to `value` (None: unset); the JSON object
    it prints last."""
    env = dict(os.environ)
    env.pop(variable, None)
    if value is not None:
        env[variable] = value
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
