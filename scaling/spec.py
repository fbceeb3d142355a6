"""What a Scaler's spec means: the recommended default, and a spec read into its parts."""

from __future__ import annotations

from typing import Any

from filters import Denoiser, make_filter
from filters.base import reject
from scaling.guards import Guard, make_guard
from scaling.policy import ThresholdPolicy

_SPEC_KEYS = {"filter", "policy", "guards"}


def default_spec(capacity: float) -> dict[str, Any]:
    """The filter and guards a Scaler gets when its spec names none: the recommended default.

    ``changepoint`` averages the samples since the last change of level it detected, leaving
    spikes out; its resolution, the smallest change that matters, is one operator's capacity.
    ``confidence`` scales a volume alone down only once the level is below the threshold by 1.5
    standard errors, so the dead band follows the noise (a stage that reports its backlog is
    decided by the cost model, which prices the level's standard error itself).
    docs/default.md measures it against 75 hand-tuned configurations.

    >>> default_spec(50.0)
    {'filter': {'name': 'changepoint', 'resolution': 50.0}, 'guards': [{'name': 'confidence'}]}
    """
    return {
        "filter": {"name": "changepoint", "resolution": float(capacity)},
        "guards": [{"name": "confidence"}],
    }


def read_spec(spec: dict[str, Any]) -> tuple[Denoiser, ThresholdPolicy, list[Guard]]:
    """The filter, policy and guards of a ``Scaler`` spec (``Scaler.from_spec``): without
    ``"filter"``, the default's (``default_spec``) and, unless ``"guards"`` are given, its
    guards. Raises ``ValueError`` naming what is wrong and what is allowed."""
    if not isinstance(spec, dict) or not {"policy"} <= set(spec) <= _SPEC_KEYS:
        allowed = (
            "spec must be a dict with the key 'policy' and optionally 'filter' and 'guards' "
            "(left out: the recommended default)"
        )
        reject("Scaler", "spec", spec, allowed)
    policy = ThresholdPolicy.from_settings(spec["policy"])
    if "filter" in spec:
        filter_spec, guards = spec["filter"], spec.get("guards", [])
    else:
        default = default_spec(policy.capacity)
        filter_spec, guards = default["filter"], spec.get("guards", default["guards"])
    if not isinstance(guards, list | tuple):
        reject("Scaler", "guards", guards, "guards must be a list of specs")
    return make_filter(filter_spec), policy, [make_guard(g) for g in guards]
