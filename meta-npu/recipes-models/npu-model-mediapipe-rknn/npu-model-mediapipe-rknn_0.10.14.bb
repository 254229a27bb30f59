# SPDX-License-Identifier: MIT
SUMMARY = "MediaPipe face models as INT8 .rknn models with golden outputs"
DESCRIPTION = "MediaPipe's face_detection_short_range and face_landmark models (mediapipe 0.10.14) \
converted by rknn-toolkit2 2.3.2 to INT8 .rknn models for RK3588 and RK3576, with the toolkit \
simulator's outputs on a real photograph (the golden outputs), the photograph as the model input, \
and the original .tflite models for the CPU reference run. The rk3588-evb and rk3576-evb \
acceptance profiles run them: the board's NPU against the goldens and against TFLite on the CPU."
HOMEPAGE = "https://github.com/google-ai-edge/mediapipe"
# The models are MediaPipe's (Apache-2.0, the wheel's licence file below); the .rknn files are
# rknn-toolkit2 conversions of them, the goldens and inputs are their outputs on, and a resize
# of, scikit-image's astronaut photograph (NASA, public domain).
LICENSE = "Apache-2.0"
LIC_FILES_CHKSUM = "file://mediapipe-${PV}.dist-info/LICENSE;md5=87a30e5cfa12d1ab9ada4fb6f3feed4b"

# The wheel carries the .tflite files; every platform's wheel has the same ones (sha256 of each
# in rknn-models.json, checked by do_verify_models). The .rknn files, goldens and inputs are made
# by scripts/make-rknn-models in the meta-npu repository (docs/rknn-models.md).
SRC_URI = "https://files.pythonhosted.org/packages/2f/ee/2e9e730dc4d98c8a9541b57bad173bebddf0e4c78f179acc100248c58066/mediapipe-${PV}-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl;downloadfilename=mediapipe-${PV}-cp311-manylinux_2_17_x86_64.zip;subdir=mediapipe \
           file://rknn-models.json \
           file://face_detection_short_range.in0.npy \
           file://face_landmark.in0.npy \
           file://rk3588 \
           file://rk3576 \
"
SRC_URI[sha256sum] = "a807328339e7356fda0bb14df12fedbf1d33bdf81649c5f8666b0026b1cc30b4"

S = "${UNPACKDIR}/mediapipe"

inherit allarch npu-model

# What the acceptance profiles run, with the inputs the application passes (rknn-models.json; the
# .tflite ones the build reads back from the files). The .rknn tensors themselves are INT8 NHWC:
# librknnrt quantizes the float32 input (pass_through = 0).
NPU_MODELS = " \
    ${datadir}/npu-models/face_detection_short_range.tflite=float32:1x128x128x3 \
    ${datadir}/npu-models/face_landmark.tflite=float32:1x192x192x3 \
    ${datadir}/npu-models/rknn/rk3588/face_detection_short_range.rknn=float32:1x128x128x3 \
    ${datadir}/npu-models/rknn/rk3588/face_landmark.rknn=float32:1x192x192x3 \
    ${datadir}/npu-models/rknn/rk3576/face_detection_short_range.rknn=float32:1x128x128x3 \
    ${datadir}/npu-models/rknn/rk3576/face_landmark.rknn=float32:1x192x192x3 \
"

# The wheel is a zip file under another name: base.bbclass adds unzip-native only for a .zip URL.
do_unpack[depends] += "unzip-native:do_populate_sysroot"
do_configure[noexec] = "1"
do_compile[noexec] = "1"

RKNN_MODEL_SOCS = "rk3588 rk3576"
MEDIAPIPE_MODELS = "face_detection/face_detection_short_range.tflite face_landmark/face_landmark.tflite"

python do_verify_models() {
    import hashlib
    import json
    import os
    unpack = d.getVar('UNPACKDIR')
    with open(os.path.join(unpack, 'rknn-models.json')) as text:
        manifest = json.load(text)
    wanted = [(os.path.join(d.getVar('S'), m['member']), m['sha256']) for m in manifest['source']['models'].values()]
    for entry in manifest['models'].values():
        wanted.append((os.path.join(unpack, entry['input']['file']), entry['input']['sha256']))
        for facts in entry['socs'].values():
            wanted.append((os.path.join(unpack, facts['rknn']), facts['sha256']))
            wanted += [(os.path.join(unpack, t['golden']), t['golden_sha256']) for t in facts['outputs']]
    for path, expected in wanted:
        with open(path, 'rb') as model:
            actual = hashlib.sha256(model.read()).hexdigest()
        if actual != expected:
            bb.fatal('%s has sha256 %s but rknn-models.json says %s: restore the file from the meta-npu repository or rebuild it with scripts/make-rknn-models --update.' % (path, actual, expected))
}
addtask verify_models after do_unpack before do_install

do_install() {
    install -d ${D}${datadir}/npu-models/rknn
    for model in ${MEDIAPIPE_MODELS}; do
        install -m 0644 ${S}/mediapipe/modules/$model ${D}${datadir}/npu-models/
    done
    install -m 0644 ${UNPACKDIR}/rknn-models.json ${UNPACKDIR}/face_detection_short_range.in0.npy \
        ${UNPACKDIR}/face_landmark.in0.npy ${D}${datadir}/npu-models/rknn/
    for soc in ${RKNN_MODEL_SOCS}; do
        install -d ${D}${datadir}/npu-models/rknn/$soc
        install -m 0644 ${UNPACKDIR}/$soc/*.rknn ${UNPACKDIR}/$soc/*.npy ${D}${datadir}/npu-models/rknn/$soc/
    done
}

FILES:${PN} += "${datadir}/npu-models"
