# SPDX-License-Identifier: MIT
# npu-devicetree.bbclass: puts meta-npu's device-tree fragment into the board tree the bootloader
# loads by default, by #including it at the end of that board's .dts in the kernel source.
#
# An #include, not an overlay: the DTB U-Boot loads (or, on Rockchip's BSP, the one packed into
# the boot image during the kernel's own make) then carries the NPU memory without any overlay
# step at boot, and the board's other trees stay as the BSP ships them.
#
# NPU_DTS_FRAGMENT: the .dtsi in SRC_URI; NPU_BOOT_DTB: the bootloader's default DTB(s), as
# KERNEL_DEVICETREE names them.

NPU_DTS_FRAGMENT ?= ""
NPU_BOOT_DTB ?= ""

# Only a recipe whose NPU_DTS_FRAGMENT is set (after its overrides) gets the fragment and the
# step: an append shared by several kernel recipes (linux-%.bbappend) inherits this class into
# linux-libc-headers too, whose task signatures, and with them the toolchain's sstate, must stay
# as they are without meta-npu.
# nooelint: oelint.task.noanonpython
python __anonymous() {
    fragment = d.getVar('NPU_DTS_FRAGMENT')
    if not fragment:
        return
    d.appendVar('SRC_URI', ' file://' + fragment)
    d.appendVarFlag('do_patch', 'postfuncs', ' npu_dts_include')
    d.appendVarFlag('do_patch', 'vardeps', ' NPU_DTS_FRAGMENT NPU_BOOT_DTB')
    bb.build.addtask('do_npu_kernel_check', 'do_compile', 'do_configure', d)
}

npu_dts_include() {
    [ -n "${NPU_DTS_FRAGMENT}" ] || return 0
    for dtb in ${NPU_BOOT_DTB}; do
        dts=${S}/arch/${ARCH}/boot/dts/${dtb%.dtb}.dts
        if [ ! -f "$dts" ]; then
            bbfatal "NPU_BOOT_DTB names $dtb but $dts does not exist: set NPU_BOOT_DTB to a board .dtb of this kernel."
        fi
        install -m 0644 ${UNPACKDIR}/${NPU_DTS_FRAGMENT} $(dirname $dts)/
        if ! grep -q "#include \"${NPU_DTS_FRAGMENT}\"" "$dts"; then
            printf '\n/* meta-npu: NPU memory */\n#include "%s"\n' "${NPU_DTS_FRAGMENT}" >> "$dts"
        fi
    done
}

# Before the kernel compiles, scripts/kernel-check (beside this layer in the meta-npu repository)
# builds the boot DTB with the fragment from a copy of ${S}'s dts tree, reads back what the
# board's acceptance profile requires, and checks that every option of the recipe's .cfg
# fragments is set in the merged ${B}/.config: a label the kernel tree lacks, or an option its
# Kconfig drops, stops the build with kernel-check's sentence instead of a dtc error deep in
# do_compile. A machine kernel-check does not know, or a layer used without the repository's
# scripts/, gets a warning or a note and the build goes on.
python do_npu_kernel_check() {
    import subprocess
    cls = bb.utils.which(d.getVar('BBPATH'), 'classes/npu-devicetree.bbclass')
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(cls))), 'scripts', 'kernel-check') if cls else ''
    if not os.path.isfile(script):
        bb.note('scripts/kernel-check is not beside this layer: the kernel tree is not checked.')
        return
    work = os.path.join(d.getVar('WORKDIR'), 'npu-kernel-check')
    bb.utils.remove(work, recurse=True)
    cmd = ['python3', script, '--tree', d.getVar('S'), '--machine', d.getVar('MACHINE'),
           '--config', os.path.join(d.getVar('B'), '.config'), '--workdir', work]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 1:
        bb.fatal(proc.stderr.strip())
    elif proc.returncode:
        bb.warn('kernel-check could not check this kernel: ' + proc.stderr.strip())
    else:
        bb.note(proc.stdout.strip())
}
# dtc and fdtget for the DTB step (the kernel's own scripts/dtc is built only in do_compile).
do_npu_kernel_check[depends] += "dtc-native:do_populate_sysroot"
do_npu_kernel_check[vardeps] += "NPU_DTS_FRAGMENT NPU_BOOT_DTB"
