# SPDX-License-Identifier: MIT
SUMMARY = "Rockchip RKNPU2 runtime library librknnrt"
DESCRIPTION = "The RKNN runtime (librknnrt.so) that loads .rknn models and runs them on the \
RKNPU of RK3588/RK3576 through the vendor kernel driver, with the rknn_api.h headers in -dev. \
rknn_server dlopens exactly /usr/lib/librknnrt.so, so the library is installed there."

require rknn-toolkit2.inc

SRC_URI += "file://rknn-version-check.sh"

do_configure[noexec] = "1"
do_compile[noexec] = "1"

RKNN_API_DIR = "${S}/rknpu2/runtime/Linux/librknn_api"
# The path rknn_server dlopens, hard-coded in the server binary (strings shows it).
# nooelint: oelint.vars.pathhardcode.libdir - this is the fixed run-time path, not a build path
RKNN_DLOPEN_PATH = "/usr/lib/librknnrt.so"

do_install() {
    if [ "${libdir}/librknnrt.so" != "${RKNN_DLOPEN_PATH}" ]; then
        bbfatal "librknnrt must be installed as ${RKNN_DLOPEN_PATH} (rknn_server dlopens that path), but libdir is ${libdir}: build this machine without a lib64 multilib layout."
    fi
    install -d ${D}${libdir} ${D}${includedir}
    install -m 0755 ${RKNN_API_DIR}/${RKNN_ARCH}/librknnrt.so ${D}${libdir}/librknnrt.so
    install -m 0644 ${RKNN_API_DIR}/include/rknn_api.h ${RKNN_API_DIR}/include/rknn_custom_op.h \
        ${RKNN_API_DIR}/include/rknn_matmul_api.h ${D}${includedir}/
    # The version the library reports must be the release this recipe claims.
    sh ${UNPACKDIR}/rknn-version-check.sh --runtime ${D}${libdir}/librknnrt.so --expect ${RKNN_SDK_VERSION}
}

# The library has no SONAME version: the unversioned .so is the runtime itself, not a dev link.
FILES_SOLIBSDEV = ""
# nooelint: oelint.var.filesoverride - the default would put the unversioned runtime in -dev
FILES:${PN} = "${libdir}/librknnrt.so"
# nooelint: oelint.var.filesoverride - headers only: the .so is the runtime, not a dev link
FILES:${PN}-dev = "${includedir}"

# Prebuilt by Rockchip: already stripped, linked without the build's LDFLAGS, and an
# unversioned .so in the main package by design (see FILES_SOLIBSDEV above).
# nooelint: oelint.vars.insaneskip - Rockchip ships the library prebuilt, see above
INSANE_SKIP:${PN} = "already-stripped ldflags dev-so"
