"""The embedding install is numpy alone: every filter but two works without filterpy and scipy,
and those two say which extra installs what they need (benchmarks/install_size.py measures the
install itself in a fresh venv)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

WITHOUT_EXTRAS = textwrap.dedent(
    """
    import sys
    for blocked in ("filterpy", "scipy", "matplotlib"):
        sys.modules[blocked] = None  # import of it now fails as if it were not installed
    from filters import available_filters, make_filter
    from scaling import Scaler
    needs_extra = {"ekf"}
    for name in available_filters():
        if name in needs_extra:
            continue
        make_filter(name).filter([300.0, 310.0, 290.0] * 20)
    scaler = Scaler.from_spec({"policy": {"capacity": 50.0}})
    print([scaler.observe(300.0 + t % 3, float(t)).operators for t in range(40)][-1])
    for build in (lambda: make_filter("ekf"),
                  lambda: make_filter("tvd", lam=10.0, method="mm").filter([1.0, 2.0, 3.0])):
        try:
            build()
        except ModuleNotFoundError as error:
            print(error)
    """
)


def test_filters_and_the_default_work_without_filterpy_and_scipy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "7"  # 301 tuples/s at 50 per operator, once warmed up
    assert lines[1:] == [
        "the ekf filter needs filterpy, which is not installed: pip install 'steadyscale[filters]'",
        "tvd's method='mm' needs scipy, which is not installed: pip install 'steadyscale[filters]'",
    ]
