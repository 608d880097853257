#!/usr/bin/env bash
# Install the CPU Vulkan device VGF targets run on (workbench/stack/vgf/tools.py) when it is missing: Mesa's
# lavapipe, from Debian's `mesa-vulkan-drivers` (which brings the Vulkan loader, libvulkan1). The ML SDK's programs
# and emulation layers are Python packages in pyproject.toml. Without lavapipe a VGF case says so in one line;
# every other target works. Idempotent, and silent when lavapipe's driver manifest (lvp_icd*.json) is there.
# Installs with apt-get only as root with apt-get available; otherwise it says what to install and exits non-zero.
# ENSURE_VULKAN_ICD_FOLDERS (space-separated) replaces the folders searched, for tests.
set -euo pipefail
shopt -s nullglob

# Where Vulkan loaders look for driver manifests, as tools.py's _ICD_FOLDERS; only bash builtins below, so that
# the script behaves the same whatever PATH holds.
DEFAULT_FOLDERS="/usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d /etc/vulkan/icd.d"
read -r -a FOLDERS <<< "${ENSURE_VULKAN_ICD_FOLDERS:-$DEFAULT_FOLDERS}"

lavapipe() {
    local folder manifest
    for folder in "${FOLDERS[@]}"; do
        for manifest in "$folder"/lvp_icd*.json; do
            echo "$manifest"
            return 0
        done
    done
    return 1
}

if lavapipe >/dev/null; then
    exit 0
fi

source "${BASH_SOURCE[0]%/*}/apt-install.sh"
apt_install ensure-vulkan "no CPU Vulkan device (Mesa's lavapipe, lvp_icd*.json in ${FOLDERS[*]}); install \
Debian's 'mesa-vulkan-drivers' package (as root: apt-get update && apt-get install -y mesa-vulkan-drivers); VGF \
targets (vgf:TOSA-1.0+FP, ...) need it, every other target works without it" \
    mesa-vulkan-drivers

if ! found="$(lavapipe)"; then
    echo "ensure-vulkan: apt-get installed mesa-vulkan-drivers, but there is no lvp_icd*.json in ${FOLDERS[*]}" >&2
    exit 1
fi
echo "ensure-vulkan: installed Mesa's lavapipe ($found)" >&2
