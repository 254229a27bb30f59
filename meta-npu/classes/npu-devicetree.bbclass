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
