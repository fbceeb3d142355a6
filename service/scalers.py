"""A stream's Scaler built from its configuration, and fed a batch, as the service does both.

``build_scaler`` names every bad field of a configuration at once (``InvalidInput``), a
filter whose extra is not installed here included (``missing_error``: the service image has no
``[filters]``);
``decide`` refuses a sample the Scaler cannot follow to finite, storable values
(``UnfollowableSample``).
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from filters import installed_filters, make_filter
from filters.base import MAX_WINDOW, MissingDependency, ParameterError
from scaling import Decision, Scaler, ThresholdPolicy, default_spec, make_guard
from service.budget import BATCH_IN_BUDGET, sample_seconds
from service.errors import InvalidInput, UnfollowableSample
from service.models import FieldError, Sample, StreamConfig

T = TypeVar("T")

# Operators a decision may ask for and still be stored (SQLite integers are 64-bit).
_MAX_DECIDED = 2**53

# Samples a configuration is tried on before a stream takes it: its filter's first updates
# differ (a first sample, a first difference), the third is a steady one.
_PROBE = 3


def decide(
    scaler: Scaler,
    samples: Sequence[Sample],
    fresh: int,
    stop: threading.Event | None = None,
) -> list[Decision]:
    """The Scaler's decisions for ``samples[fresh:]``; ``UnfollowableSample`` for the first
    it refuses or decides with a non-finite filtered value or an unstorable count. Once
    ``stop`` is set, the decisions so far (the caller throws them away)."""
    decisions = []
    for index in range(fresh, len(samples)):
        if stop is not None and stop.is_set():
            break
        sample = samples[index]
        try:
            decision = scaler.observe(
                sample.volume,
                sample.t,
                backlog=sample.backlog,
                running=sample.running,
                processed=sample.processed,
            )
        except (ValueError, ArithmeticError) as error:
            raise UnfollowableSample(index, sample, str(error)) from None
        if not math.isfinite(decision.filtered):
            why = f"the filter's output is {decision.filtered!r}"
            raise UnfollowableSample(index, sample, why)
        if decision.operators > _MAX_DECIDED:
            why = f"it needs {decision.operators} operators, more than {_MAX_DECIDED}"
            raise UnfollowableSample(index, sample, why)
        decisions.append(decision)
    return decisions


def build_scaler(config: StreamConfig) -> Scaler:
    """A fresh Scaler for ``config``; raises ``InvalidInput`` naming every bad field, with the
    messages of ``make_filter``, ``ThresholdPolicy``, ``make_guard`` and ``Scaler``."""
    errors: list[FieldError] = []

    def build(field: str, spec: dict[str, Any], make: Callable[[], T]) -> T | None:
        try:
            return make()
        except ValueError as error:
            errors.append(_field_error(field, spec, error))
        except MissingDependency as missing:
            errors.append(missing_error(field, missing))
        except (ArithmeticError, TypeError) as error:
            # A parameter its class checked but cannot hold (moving_average w=10**400 passes
            # as an integer >= 1, then overflows its deque): still the input's fault.
            allowed = f"parameters {spec.get('name')!r} can hold ({type(error).__name__}: {error})"
            errors.append(FieldError.of(field, spec, allowed))
        return None

    policy_spec = config.policy.model_dump()
    guard_specs = [guard.model_dump() for guard in config.guards]
    if config.filter is None:
        # The recommended default; its resolution is the capacity (validated with the policy).
        default = default_spec(policy_spec["capacity"])
        filter_spec = default["filter"]
        if "guards" not in config.model_fields_set:
            guard_specs = default["guards"]
    else:
        filter_spec = config.filter.model_dump()
    if filter_spec.get("method") == "mm" and filter_spec.get("window") is None:
        # Over the whole history, every sample costs more than the one before, and the state
        # holds every sample: a stream would slow down and grow without bound.
        allowed = f"with method 'mm', the service needs a window from 2 to {MAX_WINDOW}"
        errors.append(FieldError.of("filter.window", None, allowed))
    denoiser = build("filter", filter_spec, lambda: make_filter(filter_spec))
    policy = build("policy", policy_spec, lambda: ThresholdPolicy(**policy_spec))
    guards = []
    for index, spec in enumerate(guard_specs):
        guards.append(build(f"guards[{index}]", spec, functools.partial(make_guard, spec)))
    if errors:
        raise InvalidInput(errors)
    assert denoiser is not None and policy is not None
    try:
        return Scaler(denoiser, policy, [g for g in guards if g is not None], config.operators)
    except ValueError as error:
        raise InvalidInput([_field_error("", {"operators": config.operators}, error)]) from None


def usable_scaler(config: StreamConfig, work_budget: float) -> Scaler:
    """``build_scaler(config)``, refusing (``InvalidInput``) a configuration a stream could
    not use: one that cannot take ``BATCH_IN_BUDGET`` samples within ``work_budget`` CPU
    seconds (``service.budget``), or one that cannot follow a steady volume of one operator's
    capacity for ``_PROBE`` samples (a throwaway Scaler is fed them)."""
    scaler = build_scaler(config)
    seconds = sample_seconds(scaler.spec)
    if seconds * BATCH_IN_BUDGET > work_budget:
        allowed = (
            f"a filter that takes {BATCH_IN_BUDGET} samples within the work budget of "
            f"{work_budget:g} s per request (setting work_budget); this one costs about "
            f"{seconds:.3g} s of CPU per sample"
        )
        raise InvalidInput([FieldError.of("filter", scaler.spec["filter"], allowed)])
    capacity = config.policy.capacity
    probe = [Sample(t=float(t), volume=capacity) for t in range(_PROBE)]
    try:
        decide(build_scaler(config), probe, 0)
    except UnfollowableSample as error:
        allowed = "a configuration that can follow a steady volume of one operator's capacity"
        why = error.message.partition("cannot be followed: ")[2]
        message = f"the configuration cannot follow a steady volume of {capacity:g}: {why}"
        raise InvalidInput([FieldError.of("config", None, allowed, message)]) from None
    return scaler


def _field_error(prefix: str, spec: dict[str, Any], error: ValueError) -> FieldError:
    """``error`` (from building a part out of ``spec``) as the error of the field it names:
    a ``ParameterError`` carries its parameter, value and what is allowed; any other
    ``ValueError`` is about the part as a whole."""
    if isinstance(error, ParameterError):
        field = f"{prefix}.{error.param}" if prefix else error.param
        value = spec.get(error.param, error.value)
        return FieldError.of(field, value, error.allowed)
    return FieldError.of(prefix or "config", spec, str(error))


def missing_error(prefix: str, missing: MissingDependency) -> FieldError:
    """The error of the setting (``filter.name``, ``filter.method``) whose value needs a
    module this service lacks: what it needs, which extra installs it, and what works here."""
    field = f"{prefix}.{missing.param}"
    if missing.param == "name":
        usable = ", ".join(repr(name) for name in installed_filters())
        instead = f"one of {usable}, which this service can run"
    else:
        instead = missing.instead or f"a {missing.param} that needs no package this service lacks"
    allowed = (
        f"{instead}; {missing.value!r} needs {missing.name}, which is not installed where the "
        f"service runs (pip install 'steadyscale[{missing.extra}]' there)"
    )
    return FieldError.of(field, missing.value, allowed)


def per_operator(spec: dict[str, Any]) -> float:
    """The volume one operator of a stream with this Scaler spec is planned for, tuples/s."""
    policy = spec["policy"]
    return float(policy["capacity"]) * float(policy.get("utilisation", 1.0))
