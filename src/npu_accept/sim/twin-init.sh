#!/bin/bash
# SPDX-License-Identifier: MIT
# PID 1 of a board twin, run by npu_accept/sim/harness.py as
#   unshare --mount --propagation private --pid --uts --fork --kill-child=SIGKILL twin-init.sh TWINDIR
# Everything below happens inside the private mount, PID and UTS namespaces: the host's /, /sys, /dev
# and /proc are never written. The board's root is an overlay of the twin's files over the host's
# root with a tmpfs upper layer, entered with chroot; /sys, /dev, /run and /tmp are fresh tmpfs.
set -euo pipefail

twin=$1
spec=$twin/spec
mnt=$twin/mnt
root=$mnt/root

cat "$spec/hostname" >/proc/sys/kernel/hostname
mount -t tmpfs -o mode=0755 twin-layers "$mnt"
mkdir -p "$mnt/fs" "$mnt/upper" "$mnt/work" "$root"
# The twin's files must live on another filesystem than the host root to be stacked on it.
cp -a "$spec/fs/." "$mnt/fs/"
# Hide the host user's shell start-up files (whiteouts): a board's root has its own, and the
# host's (pyenv, cargo, ...) would slow every command down and leak the host's environment.
mkdir -p "$mnt/upper/root"
for rc in .bashrc .bash_profile .bash_login .bash_logout .profile .shrc .kshrc .mkshrc .zshrc .zshenv; do
    mknod "$mnt/upper/root/$rc" c 0 0
done
mount -t overlay twin-root -o "lowerdir=$mnt/fs:/,upperdir=$mnt/upper,workdir=$mnt/work" "$root"

mount -t proc proc "$root/proc"
# Files presented over existing procfs entries (osrelease, modules, ...): list of relative paths.
while IFS= read -r rel; do
    [ -n "$rel" ] || continue
    mount --bind "$spec/proc/$rel" "$root/proc/$rel"
done <"$spec/proc.list"

for dir in sys dev run tmp; do
    mount -t tmpfs -o mode=0755 "twin-$dir" "$root/$dir"
    cp -a "$spec/$dir/." "$root/$dir/"
done
chmod 1777 "$root/tmp"
# The Python running the tools, when it lives under one of those tmpfs (a venv in /tmp): read-only.
while IFS= read -r keep; do
    [ -n "$keep" ] || continue
    mkdir -p "$root$keep"
    mount --bind "$keep" "$root$keep"
    mount -o remount,bind,ro "$root$keep"
done <"$spec/keep.list"

# /dev: the real character devices a userland needs, then the twin's NPU nodes.
mknod -m 666 "$root/dev/null" c 1 3
mknod -m 666 "$root/dev/zero" c 1 5
mknod -m 666 "$root/dev/full" c 1 7
mknod -m 666 "$root/dev/random" c 1 8
mknod -m 666 "$root/dev/urandom" c 1 9
mknod -m 666 "$root/dev/tty" c 5 0
mkdir -p "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 twin-devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
mount -t tmpfs -o mode=1777 twin-shm "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
# devices.list: PATH MAJOR MINOR MODE (octal)
while read -r path major minor mode; do
    [ -n "$path" ] || continue
    mkdir -p "$root$(dirname "$path")"
    mknod -m "$mode" "$root$path" c "$major" "$minor"
done <"$spec/devices.list"

# The twin's control directory (sshd config, keys, logs) is visible inside as /run/twin.
mkdir -p "$root/run/twin" "$root/run/sshd"
chmod 0755 "$root/run/sshd"
mount --bind "$twin/run" "$root/run/twin"

# Background processes: processes.list holds NAME RESTART lines; the command is processes/NAME.
while read -r name restart; do
    [ -n "$name" ] || continue
    log=/run/twin/log/$name.log
    if [ "$restart" = 1 ]; then
        # a tiny supervisor: restart the daemon whenever it dies, as systemd's Restart=always would
        chroot "$root" /bin/sh -c "while :; do /run/twin/processes/$name >>$log 2>&1; sleep 0.2; done" &
    else
        chroot "$root" /bin/sh -c "exec /run/twin/processes/$name >>$log 2>&1" &
    fi
done <"$spec/processes.list"

# sshd in the foreground of this loop; kill_sshd() kills it (and its sessions) to simulate a
# board going away, start_sshd() creates run/restart to bring it back on the same port.
while :; do
    chroot "$root" /usr/sbin/sshd -D -e -f /run/twin/sshd_config 2>>"$twin/run/sshd.log" &
    wait $! || true
    while [ ! -e "$twin/run/restart" ]; do
        sleep 0.05
    done
    rm -f "$twin/run/restart"
done
