# SPDX-License-Identifier: MIT
SUMMARY = "RKNN-Toolkit-Lite2: Python API (rknnlite) to run .rknn models on the board"
DESCRIPTION = "Rockchip's prebuilt rknn_toolkit_lite2 wheel. Rockchip publishes it for CPython \
3.7 to 3.12 on aarch64 only, so the recipe is skipped, with the reason, for any other Python or \
architecture. npu-run's rknn backend uses librknnrt through ctypes and does not need it."

require rknn-toolkit2.inc

DEPENDS += "python3-installer-native"

inherit python3native python3-dir

# Wheels in rknn-toolkit-lite2/packages/ at tag v2.3.2 (and their md5s in packages.md5sum there).
RKNN_LITE2_PYTHONS = "3.7 3.8 3.9 3.10 3.11 3.12"

# nooelint: oelint.task.noanonpython - the wheel depends on the Python version, known only at parse time
python () {
    pyver = d.getVar('PYTHON_BASEVERSION')
    arch = d.getVar('TARGET_ARCH')
    if arch != 'aarch64' or pyver not in d.getVar('RKNN_LITE2_PYTHONS').split():
        raise bb.parse.SkipRecipe(
            'RKNN-Toolkit-Lite2 %s has wheels for CPython %s on aarch64 only; this build has '
            'Python %s on %s, so it is left out (npu-run uses librknnrt through ctypes instead).'
            % (d.getVar('PV'), ', '.join(d.getVar('RKNN_LITE2_PYTHONS').split()), pyver, arch))
    tag = 'cp' + pyver.replace('.', '')
    abi = tag + ('m' if pyver == '3.7' else '')
    d.setVar('RKNN_LITE2_WHEEL', 'rknn_toolkit_lite2-%s-%s-%s-manylinux_2_17_aarch64.manylinux2014_aarch64.whl'
             % (d.getVar('PV'), tag, abi))
}

RKNN_LITE2_DIR = "${S}/rknn-toolkit-lite2/packages"

do_configure[noexec] = "1"
do_compile[noexec] = "1"

do_install() {
    # The wheel must be the one Rockchip listed in packages.md5sum.
    (cd ${RKNN_LITE2_DIR} && grep " ${RKNN_LITE2_WHEEL}\$" packages.md5sum | md5sum -c -) || \
        bbfatal "${RKNN_LITE2_WHEEL} does not match its md5 in packages.md5sum: the checkout is damaged."
    nativepython3 -m installer --destdir=${D} --interpreter "${USRBINPATH}/env ${PYTHON_PN}" \
        ${RKNN_LITE2_DIR}/${RKNN_LITE2_WHEEL}
}

# nooelint: oelint.var.filesoverride - the package is exactly the installed wheel
FILES:${PN} = "${PYTHON_SITEPACKAGES_DIR}"

# Requires-Dist of the wheel's METADATA: numpy, psutil, ruamel.yaml.
RDEPENDS:${PN} = "librknnrt python3-core python3-numpy python3-psutil python3-ruamel-yaml"

# Prebuilt extension modules: already stripped and linked without the build's LDFLAGS.
# nooelint: oelint.vars.insaneskip - Rockchip ships the extension modules prebuilt, see above
INSANE_SKIP:${PN} = "already-stripped ldflags"
