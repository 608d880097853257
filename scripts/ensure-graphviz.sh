#!/usr/bin/env bash
# Install what draws the large partition graph (workbench/views/graph_svg.py) when it is missing: Graphviz's
# `dot`, from Debian's `graphviz` package. (The Python side, the `graphviz` package, is a dependency in
# pyproject.toml.) Without `dot` the explorer falls back to the matplotlib picture and says so; nothing fails.
# Idempotent, and silent when `dot` is there. Installs with apt-get only as root with apt-get available;
# otherwise it says what to install and exits non-zero.
set -euo pipefail

if command -v dot >/dev/null 2>&1; then
    exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install ensure-graphviz "no Graphviz 'dot' on PATH; install Debian's 'graphviz' package (as root: apt-get \
update && apt-get install -y graphviz); the explorer falls back to the matplotlib partition graph without it" \
    graphviz

if ! command -v dot >/dev/null 2>&1; then
    echo "ensure-graphviz: apt-get installed graphviz, but there is no 'dot' on PATH" >&2
    exit 1
fi
echo "ensure-graphviz: installed $(dot -V 2>&1)" >&2
