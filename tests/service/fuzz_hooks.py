"""schemathesis hooks for fuzzing the service: ``SCHEMATHESIS_HOOKS=tests.service.fuzz_hooks``
for the command line (``benchmarks/service_fuzz.py``, run by ``benchmarks.service --only
fuzz``); ``tests/service/test_fuzz.py`` registers the same on its schema.

Generated samples are put in increasing ``t``, as a client sends them: random times are almost
never increasing, and the refusal (409) would end every sequence of linked operations at its
first POST, before any decision could be read back. Sorting keeps every other property of the
body, valid or not.
"""

from __future__ import annotations

from typing import Any

import schemathesis

SAMPLES = "POST /v1/streams/{stream_id}/samples"


def increasing_samples(body: Any) -> Any:
    """``body`` with its samples sorted by ``t``, repeated times dropped; other bodies as they
    are.

    >>> increasing_samples({"samples": [{"t": 2, "volume": 1}, {"t": 1, "volume": 5}]})
    {'samples': [{'t': 1, 'volume': 5}, {'t': 2, 'volume': 1}]}
    """
    samples = body.get("samples") if isinstance(body, dict) else None
    timed = isinstance(samples, list) and all(
        isinstance(sample, dict) and type(sample.get("t")) in (int, float) for sample in samples
    )
    if not timed:
        return body
    increasing: dict[float, Any] = {}
    for sample in sorted(samples, key=lambda sample: sample["t"]):  # type: ignore[union-attr]
        increasing.setdefault(sample["t"], sample)
    return {**body, "samples": list(increasing.values())}


@schemathesis.hook
def map_body(context: Any, body: Any) -> Any:
    """The global hook the command line loads."""
    return increasing_samples(body) if context.operation.label == SAMPLES else body
