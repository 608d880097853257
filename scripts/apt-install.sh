#!/usr/bin/env bash
# Shared by the ensure-*.sh scripts: `apt_install WHO HINT PACKAGE...` installs Debian packages with apt-get when
# run as root with apt-get available; otherwise it prints HINT (what to install by hand) and returns non-zero.

apt_install() {
    local who="$1" hint="$2"
    shift 2
    if [ "${EUID:-1}" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "$who: $hint" >&2
        return 1
    fi
    echo "$who: installing Debian's $* with apt-get ..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
