# SPDX-License-Identifier: MIT
SUMMARY = "Rockchip RKNN debug server rknn_server"
DESCRIPTION = "rknn_server, the board side of RKNN-Toolkit2's connected debugging and accuracy \
analysis. It dlopens /usr/lib/librknnrt.so and reads its version with strings|grep|awk; \
Rockchip's user guide asks for server and runtime of the same version, so it is built from the \
same pinned source as librknnrt and the build stops if the two version strings differ."

require rknn-toolkit2.inc

DEPENDS += "librknnrt"

SRC_URI += "file://rknn-version-check.sh \
            file://rknn-server.service \
            file://rknn-server.init \
"

inherit systemd update-rc.d

do_configure[noexec] = "1"
do_compile[noexec] = "1"

RKNN_SERVER_DIR = "${S}/rknpu2/runtime/Linux/rknn_server/${RKNN_ARCH}/usr/bin"

do_install() {
    install -d ${D}${bindir}
    install -m 0755 ${RKNN_SERVER_DIR}/rknn_server ${D}${bindir}/rknn_server
    install -m 0755 ${RKNN_SERVER_DIR}/start_rknn.sh ${RKNN_SERVER_DIR}/restart_rknn.sh ${D}${bindir}/

    # Server and runtime must report the same version, and it must be this release: check the
    # server against the librknnrt staged in the sysroot, which another recipe installed.
    sh ${UNPACKDIR}/rknn-version-check.sh --server ${D}${bindir}/rknn_server \
        --runtime ${STAGING_LIBDIR}/librknnrt.so --expect ${RKNN_SDK_VERSION}

    if ${@bb.utils.contains('DISTRO_FEATURES', 'systemd', 'true', 'false', d)}; then
        install -d ${D}${systemd_system_unitdir}
        install -m 0644 ${UNPACKDIR}/rknn-server.service ${D}${systemd_system_unitdir}/
    fi
    if ${@bb.utils.contains('DISTRO_FEATURES', 'sysvinit', 'true', 'false', d)}; then
        install -d ${D}${sysconfdir}/init.d
        install -m 0755 ${UNPACKDIR}/rknn-server.init ${D}${sysconfdir}/init.d/rknn-server
    fi
}

SYSTEMD_SERVICE:${PN} = "rknn-server.service"
INITSCRIPT_NAME = "rknn-server"
INITSCRIPT_PARAMS = "defaults 95 5"

FILES:${PN} += "${systemd_system_unitdir} ${sysconfdir}/init.d"

# What rknn_server and its scripts run: the runtime it dlopens, strings|grep|awk for the
# runtime version (strings is in binutils), killall in restart_rknn.sh (psmisc).
RDEPENDS:${PN} = "binutils gawk grep librknnrt psmisc"

# Prebuilt by Rockchip: already stripped and linked without the build's LDFLAGS.
# nooelint: oelint.vars.insaneskip - Rockchip ships the binary prebuilt, see above
INSANE_SKIP:${PN} = "already-stripped ldflags"
