#
# SPDX-License-Identifier: MIT
#
"""NPU acceptance in testimage: the checks of `pytest pytests`, through oeqa's target.

    IMAGE_CLASSES += "testimage"
    TEST_TARGET = "simpleremote"
    TEST_TARGET_IP = "192.168.1.20"
    TEST_SERVER_IP = "192.168.1.10"
    TEST_SUITES = "ping ssh npu"
    NPU_ACCEPT_PROFILE = "imx95-verdin"    # a board profile (npu-accept profiles)

`bitbake -c testimage npu-image` then reports test_npu_1_driver … test_npu_10_pairing. The
collection and the judging are npu_accept's own (npu_accept.lab.oeqa_bridge adapts oeqa's target
to the suite's transport): this file holds no check logic. The npu_accept package and its
dependencies must be installed in the Python that runs BitBake (e.g. the venv kas runs from):
`pip install meta-npu-tools`, or `pip install -e` of this repository.
"""

import tempfile
from pathlib import Path

from oeqa.runtime.case import OERuntimeTestCase

try:
    from npu_accept.lab.oeqa_bridge import accept

    _IMPORT_ERROR = None
except ImportError as exc:  # the host python3 lacks the suite: every test says so, no traceback
    accept = None
    _IMPORT_ERROR = (
        f"The npu_accept package cannot be imported by the host's python3 ({exc}); "
        "install it into the Python that runs BitBake: `python3 -m pip install meta-npu-tools` "
        "(or `python3 -m pip install -e` of the meta-npu repository)."
    )


class NpuAcceptanceTest(OERuntimeTestCase):
    """One test per acceptance check; the board is examined once for the class."""

    verdict = None
    error = None

    @classmethod
    def setUpClass(cls):
        if _IMPORT_ERROR:
            cls.error = _IMPORT_ERROR
            return
        profile = cls.td.get("NPU_ACCEPT_PROFILE") if cls.td else None
        if not profile:
            cls.error = (
                'NPU_ACCEPT_PROFILE is not set; add NPU_ACCEPT_PROFILE = "<board>" (a profile '
                "shipped with npu_accept, e.g. imx95-verdin) to local.conf."
            )
            return
        log_dir = cls.td.get("TEST_LOG_DIR") or tempfile.mkdtemp(prefix="npu-oeqa-")
        label = cls.td.get("MACHINE") or "oeqa-target"
        try:
            cls.verdict = accept(cls.tc.target, profile, Path(log_dir) / "npu-accept", label=label)
        except ValueError as exc:
            cls.error = str(exc)

    def _judge(self, check):
        if self.error:
            self.fail(self.error)
        result = self.verdict.results[check]
        if result.status == "fail":
            self.fail(result.message)
        if result.status == "skip":
            self.skipTest(result.message)

    def test_npu_1_driver(self):
        self._judge("driver")

    def test_npu_2_silicon(self):
        self._judge("silicon")

    def test_npu_3_runtime(self):
        self._judge("runtime")

    def test_npu_4_delegate(self):
        self._judge("delegate")

    def test_npu_5_outputs(self):
        self._judge("outputs")

    def test_npu_6_memory(self):
        self._judge("memory")

    def test_npu_7_performance(self):
        self._judge("performance")

    def test_npu_8_kernel_log(self):
        self._judge("kernel_log")

    def test_npu_9_determinism(self):
        self._judge("determinism")

    def test_npu_10_pairing(self):
        self._judge("pairing")
