#!/usr/bin/env bash
# Install what the browser tests (tests/test_browser.py, marker `browser`) need when it is missing: Debian's
# Chromium, which they drive with Playwright for Python (that comes with the dev extra: pip install -e '.[dev]').
# Idempotent, and silent when everything is there. Installs with apt-get only as root with apt-get available;
# otherwise it says what to install and exits non-zero.
# WORKBENCH_CHROMIUM names another Chromium or Chrome executable to use instead (then nothing is installed).
set -euo pipefail

CHROMIUM="${WORKBENCH_CHROMIUM:-/usr/bin/chromium}"

if [ -x "$CHROMIUM" ]; then
    exit 0
fi

if [ -n "${WORKBENCH_CHROMIUM:-}" ]; then
    echo "ensure-browser: WORKBENCH_CHROMIUM=$CHROMIUM is not an executable" >&2
    exit 1
fi

source "$(dirname "$0")/apt-install.sh"
apt_install ensure-browser "no Chromium at $CHROMIUM; install Debian's 'chromium' package (as root: apt-get \
update && apt-get install -y chromium), or set WORKBENCH_CHROMIUM to a Chromium or Chrome executable" \
    chromium fonts-dejavu-core

if [ ! -x "$CHROMIUM" ]; then
    echo "ensure-browser: apt-get installed chromium, but there is no executable at $CHROMIUM" >&2
    exit 1
fi
echo "ensure-browser: installed $("$CHROMIUM" --version 2>/dev/null | tail -n 1)" >&2
