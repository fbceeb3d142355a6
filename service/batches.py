"""A batch of samples checked against itself and against what its stream has applied.

Times strictly increase within a batch; a sample at or before the stream's last applied ``t``
is a duplicate only if a retained sample has the same ``t``, volume and reports (backlog,
running, processed: it is acknowledged and not applied again); any other is refused whole
(``SampleConflict``), nothing applied.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.errors import SampleConflict
from service.models import Sample
from service.rows import REPEATED
from service.store import Store


def check_increasing(samples: Sequence[Sample]) -> None:
    """``SampleConflict`` naming the first sample whose ``t`` is not after the one before."""
    for index in range(1, len(samples)):
        previous, sample = samples[index - 1], samples[index]
        if not sample.t > previous.t:
            raise SampleConflict(
                index,
                sample,
                f"t is not after samples[{index - 1}].t={previous.t!r}; times must increase "
                "within a batch",
                f"t > {previous.t!r}",
            )


def first_new(
    storage: Store, stream_id: str, last_t: float | None, samples: Sequence[Sample]
) -> int:
    """Index of the first sample after ``last_t``; raises ``SampleConflict`` unless every
    sample before it repeats a stored sample exactly, what it reported included."""
    fresh = 0
    while fresh < len(samples) and last_t is not None and samples[fresh].t <= last_t:
        fresh += 1
    if not fresh:
        return 0
    stored = storage.applied_samples(stream_id, [s.t for s in samples[:fresh]])
    for index, sample in enumerate(samples[:fresh]):
        applied = stored.get(sample.t)
        if applied is None:
            raise SampleConflict(
                index,
                sample,
                f"t is not after the last applied t={last_t!r} and no retained sample has this t",
                f"t > {last_t!r}, or a retained sample repeated exactly",
            )
        for field, value in zip(REPEATED, applied, strict=True):
            if getattr(sample, field) != value:
                raise SampleConflict(
                    index,
                    sample,
                    f"a sample at this t was applied with {field}={value!r}",
                    f"{field}={value!r} (a retry of the applied sample), or t > {last_t!r}",
                    field=field,
                )
    return fresh
