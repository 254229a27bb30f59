#!/bin/sh
# SPDX-License-Identifier: MIT
# Check the version strings inside Rockchip's prebuilt RKNN binaries at build time.
#
#   rknn-version-check.sh [--server RKNN_SERVER] [--runtime LIBRKNNRT] --expect X.Y.Z
#
# rknn_server carries "rknn_server version: X.Y.Z (…)" and reads the runtime's version by
# running `strings LIB | grep "librknnrt version" | awk -F 'version: '`, so librknnrt carries
# "librknnrt version: X.Y.Z (…)". Rockchip's user guide asks for server and runtime of the same
# version (the server only logs both at start); this stops the build when they differ. Exit 0 when every given binary reports
# the expected version, 1 with one sentence on stderr otherwise, 2 for bad usage.

set -eu

server=""
runtime=""
expect=""

usage() {
    echo "usage: rknn-version-check.sh [--server FILE] [--runtime FILE] --expect X.Y.Z" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --server) [ $# -ge 2 ] || usage; server=$2; shift 2 ;;
        --runtime) [ $# -ge 2 ] || usage; runtime=$2; shift 2 ;;
        --expect) [ $# -ge 2 ] || usage; expect=$2; shift 2 ;;
        *) usage ;;
    esac
done
[ -n "$expect" ] || usage
[ -n "$server$runtime" ] || usage

# version_of FILE NAME: the X.Y.Z after "NAME version: " in FILE, or nothing.
version_of() {
    grep -a -o "$2 version: [0-9][0-9.]*[0-9]" "$1" | head -n 1 | sed "s/^$2 version: //"
}

check() {
    file=$1
    name=$2
    if [ ! -r "$file" ]; then
        echo "rknn-version-check: $file does not exist or is not readable: check the $name path." >&2
        exit 1
    fi
    found=$(version_of "$file" "$name")
    if [ -z "$found" ]; then
        echo "rknn-version-check: $file has no \"$name version: X.Y.Z\" string: it is not a $name binary of the RKNN SDK." >&2
        exit 1
    fi
    if [ "$found" != "$expect" ]; then
        echo "rknn-version-check: $file is $name $found but $expect is expected: take the server and the runtime from the same RKNN SDK release." >&2
        exit 1
    fi
    echo "rknn-version-check: $name $found in $file"
}

[ -z "$runtime" ] || check "$runtime" librknnrt
[ -z "$server" ] || check "$server" rknn_server
exit 0
