"""A tier process runs numpy's BLAS on one thread (services.runtime.lifecycle)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, numpy, threadpoolctl
from services.runtime.lifecycle import single_threaded_blas
single_threaded_blas()
print(json.dumps([(i["internal_api"], i["num_threads"]) for i in threadpoolctl.threadpool_info()
                  if i["user_api"] == "blas"]))
"""


def test_single_threaded_blas_leaves_every_blas_library_one_thread() -> None:
    # A fresh interpreter: the limit is process-wide and must not leak into other tests.
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        env={"OPENBLAS_NUM_THREADS": "2", "PATH": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    libraries = json.loads(done.stdout)
    assert libraries, "numpy loaded no BLAS library that threadpoolctl can see"
    assert all(threads == 1 for _, threads in libraries), (
        f"expected one thread per BLAS library, got {libraries}"
    )
