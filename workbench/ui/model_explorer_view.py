"""A result in Google's Model Explorer (the optional extra `model-explorer`), served by a child process on loopback
and shown in the notebook in an IFrame.

Model Explorer's own notebook embedding works only in Colab (model_explorer/server.py: `start` embeds in Colab, else
runs a server and opens a browser tab), so, as executorch's devtools/visualization/visualization_utils.py does
(`ModelExplorerServer`: `subprocess.Popen(["model-explorer", "--no_open_in_browser", "--port", ...])`), the server
runs as a separate process: `python -m model_explorer GRAPH --node_data_paths ... --host 127.0.0.1 --port PORT
--no_open_in_browser` (model_explorer/cmdline.py), on a free loopback port, the files from
`views.model_explorer.to_model_explorer`. The page it serves is the web app of the package (model_explorer/web_app);
it asks the network only for Google's fonts, and draws without them.

One server at a time: opening another result stops the one before, and so do `stop()`, closing the explorer and
the end of this Python process. Nothing of Model Explorer is imported into this process.
"""

from __future__ import annotations

import atexit
import html
import importlib.util
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

from ..views.model_explorer import ModelExplorerFiles, to_model_explorer

HOST = "127.0.0.1"
INSTALL_HINT = "Model Explorer is not installed; install the extra: pip install -e '.[model-explorer]'"
START_SECONDS = 90  # the server loads its adapters (torch among them) before it answers
LOG_FILE = "model-explorer.log"

_current: list["ModelExplorerServer"] = []  # the server this process started last, while it runs


def require_model_explorer() -> None:
    """Raise one line naming the extra when the package `model_explorer` is not installed."""
    if importlib.util.find_spec("model_explorer") is None:
        raise ModuleNotFoundError(INSTALL_HINT)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def page_query(files: ModelExplorerFiles) -> str:
    """The `data` query of the page that opens the graph with its node data: Model Explorer's own encoding
    (model_explorer/config.py: ModelExplorerConfig.to_url_param_value), node data applied to the first model."""
    data = {"models": [{"url": str(files.graph.resolve())}],
            "nodeData": [str(path.resolve()) for path in files.node_data],
            "nodeDataTargets": ["" for _ in files.node_data]}
    return quote(json.dumps(data))


class ModelExplorerServer:
    """A Model Explorer server process for written files; in a notebook it shows as an IFrame of its page."""

    def __init__(self, files: ModelExplorerFiles, *, height: int = 700, env: dict | None = None,
                 remove_folder: bool = False):
        """`env`: the server's environment (None: this process's); `remove_folder`: delete the files' folder
        when the server stops (a temporary folder made for it)."""
        require_model_explorer()
        paths = [files.graph, *files.node_data]
        if any("," in str(path) for path in paths):  # the command line splits its lists at commas
            raise ValueError(f"Model Explorer's command line cannot take a path with a comma: {paths}")
        self.files, self.height, self.port = files, height, _free_port()
        self.url = f"http://{HOST}:{self.port}/?data={page_query(files)}"
        self.log = files.graph.parent / LOG_FILE
        self.command = [sys.executable, "-m", "model_explorer", str(files.graph),
                        "--node_data_paths", ",".join(str(p) for p in files.node_data),
                        "--host", HOST, "--port", str(self.port), "--no_open_in_browser"]
        self.env, self.remove_folder = env, remove_folder
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = START_SECONDS) -> "ModelExplorerServer":
        """Start the process and return once it answers its health check (model_explorer/server.py)."""
        with open(self.log, "wb") as log:
            # Its own session: an interrupt of the kernel is not the server's.
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True, env=self.env)
        deadline = time.monotonic() + timeout
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = self.log.read_text(errors="replace").strip().splitlines()[-3:]
                self.stop()
                raise RuntimeError(f"Model Explorer did not start on port {self.port}: {' | '.join(tail)}")
            time.sleep(0.2)
        return self

    def _healthy(self) -> bool:
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy
        try:
            with direct.open(f"http://{HOST}:{self.port}/check_health", timeout=2) as response:
                return response.read() == b"model_explorer_ok"
        except OSError:
            return False

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """End the server process (and forget it as this process's current one)."""
        if self in _current:
            _current.remove(self)
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if self.remove_folder:
            shutil.rmtree(self.files.graph.parent, ignore_errors=True)

    def _repr_html_(self) -> str:
        if not self.running:
            return "<i>Model Explorer stopped</i>"
        return (f'<iframe class="wb-model-explorer" src="{html.escape(self.url)}" width="100%" '
                f'height="{int(self.height)}" style="border:1px solid #ccc"></iframe>'
                f'<div><small><a href="{html.escape(self.url)}" target="_blank">open in a new tab</a></small></div>')

    def __repr__(self) -> str:
        return f"ModelExplorerServer(http://{HOST}:{self.port}, {'running' if self.running else 'stopped'})"


def stop_model_explorer() -> None:
    """Stop the server this process started last, if it runs."""
    for server in list(_current):
        server.stop()


atexit.register(stop_model_explorer)  # this module loads only when a server is asked for


def open_in_model_explorer(result, folder=None, *, height: int = 700,
                           timeout: float = START_SECONDS) -> ModelExplorerServer:
    """Write `result` for Model Explorer into `folder` (when None, a temporary folder deleted when the server
    stops), stop the server opened before, start one for it and return it; shown in a notebook cell it is the
    page in an IFrame."""
    require_model_explorer()
    files = to_model_explorer(result, folder if folder is not None else
                              tempfile.mkdtemp(prefix="workbench-model-explorer-"))
    stop_model_explorer()
    server = ModelExplorerServer(files, height=height, remove_folder=folder is None).start(timeout)
    _current.append(server)
    return server
