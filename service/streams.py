"""Streams: one Scaler each, fed batch by batch, durably, one batch at a time per stream.

``StreamService`` is what the routes call. For a batch of samples it

1. takes the stream's lock (batches of one stream are applied one after the other; other
   streams have locks of their own and never wait for this one);
2. takes the stream's Scaler from its cache, or builds it from the stored spec and state;
3. checks the whole batch before applying any of it: times strictly increase; a sample at or
   before the last applied ``t`` is a duplicate only if a stored sample has the same ``t`` and
   volume (it is acknowledged and not applied again), otherwise the batch is refused
   (``SampleConflict``);
4. feeds the new samples to the Scaler and stores the decisions and the Scaler's new state in
   one transaction, conditional on the stream being unchanged in the database since its Scaler
   was loaded.

The database is the truth; the cache (the ``cache_size`` streams used last) only saves
rebuilding the Scaler for every batch. A cached Scaler is used only while the stream's stored
revision is the one it was loaded at (one small read per batch): another replica, or another
process on the same file, may have written since, and a cache that ran behind would answer a
resent batch with an old operator count. If anything fails after the Scaler has seen a sample,
the cache entry is dropped, so the next batch starts again from the stored state. If the stream
changed in the database between that check and the commit (a replica racing this one), the
commit stores nothing and the batch is redone on the stored state; after ``_ATTEMPTS`` such
races in a row the batch is refused with 503 (``StreamContended``), nothing of it stored.

A batch the Scaler cannot follow (its filter or policy refuses a value it computed, or a
decision or the new state is not finite) is refused whole (422, ``UnfollowableSample``) before
anything is stored: a non-finite state, once stored, could never be loaded again. The Scaler
advances its filter before its policy checks the filtered value, so this is checked here, by
rebuilding the Scaler from the stored state after a refused batch.

``put`` with the configuration a stream already has changes nothing; another configuration
replaces the stream (and forgets its state and history) only when asked (``reset=True``),
otherwise it is refused (409): a deployment that PUTs its configuration at every start must
not erase its streams.

Duplicates are recognised as long as the sample is retained (the newest ``retention`` samples
of the stream); an older sample sent again is refused like any other late sample.

>>> import tempfile
>>> from pathlib import Path
>>> from service.models import Sample, StreamConfig
>>> from service.storage import Storage
>>> service = StreamService(Storage(Path(tempfile.mkdtemp()) / "db"), retention=1000,
...                         max_batch=100)
>>> config = StreamConfig.model_validate({"filter": {"name": "raw"},
...                                       "policy": {"capacity": 50.0}})
>>> service.put("orders", config)[1]
'created'
>>> batch = [Sample(t=0.0, volume=120.0), Sample(t=1.0, volume=260.0)]
>>> [d.operators for d in service.post_samples("orders", batch).decisions]
[3, 6]
>>> retry = service.post_samples("orders", batch)
>>> retry.accepted, retry.duplicates, retry.operators
(0, 2, 6)
"""

from __future__ import annotations

import functools
import math
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from filters import make_filter
from filters.base import ParameterError
from filters.tvd import MAX_WINDOW
from scaling import Decision, Scaler, ThresholdPolicy, default_spec, make_guard
from service.metrics import Metrics
from service.models import FieldError, Sample, SampleRef, StreamConfig
from service.storage import (
    NonFiniteState,
    StaleRevision,
    StorageBusy,
    StorageUnavailable,
    Store,
    StoredStream,
)

T = TypeVar("T")

# Batches up to this many samples may be applied on the event loop (post_samples_async), when
# the stream's last batches cost at most INLINE_SECONDS for that many samples (a slow filter,
# e.g. tvd's "mm" method, never runs on the loop).
INLINE_BATCH = 128
INLINE_SECONDS = 0.002

# Streams whose Scaler stays cached (about 10 KB each); the rest are rebuilt from storage.
CACHE_SIZE = 1024

# Operators a decision may ask for and still be stored (SQLite integers are 64-bit).
_MAX_DECIDED = 2**53

# A batch is redone when the stream changed in the database since its Scaler was loaded; each
# retry means another writer (a replica) committed to the stream, so a few suffice unless
# writers keep racing on one stream, which a client resending to another replica can cause.
_ATTEMPTS = 10


class ServiceError(HTTPException):
    """A request the service refuses: a status, a sentence, and each field at fault.

    An ``HTTPException``, so that FastAPI passes it through unchanged even from inside body
    parsing; the app renders every one as a ``service.models.Problem``.
    """

    def __init__(
        self,
        status_code: int,
        message: str,
        errors: Sequence[FieldError] = (),
        *,
        sample: SampleRef | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(status_code, message, headers)
        self.message = message
        self.errors = list(errors)
        self.sample = sample


class StreamNotFound(ServiceError):
    """No stream has this id (404)."""

    def __init__(self, stream_id: str) -> None:
        message = f"no stream has the id {stream_id!r}"
        allowed = "the id of an existing stream (PUT /v1/streams/{stream_id} creates one)"
        super().__init__(404, message, [FieldError.of("stream_id", stream_id, allowed, message)])


class NoDecision(ServiceError):
    """The stream exists but has not decided anything yet (404)."""

    def __init__(self, stream_id: str) -> None:
        message = f"stream {stream_id!r} has no decision yet: POST samples to it first"
        allowed = "a stream that has received at least one sample"
        super().__init__(404, message, [FieldError.of("stream_id", stream_id, allowed, message)])


class InvalidInput(ServiceError):
    """A configuration or a parameter that is not allowed (422)."""

    def __init__(self, errors: Sequence[FieldError]) -> None:
        super().__init__(422, "; ".join(error.message for error in errors), errors)


class BatchTooLarge(ServiceError):
    """More samples than the service takes in one request (413)."""

    def __init__(self, count: int, max_batch: int) -> None:
        allowed = f"at most {max_batch} samples per request (setting max_batch)"
        message = f"{count} samples in one request; {allowed}"
        super().__init__(413, message, [FieldError.of("samples", count, allowed, message)])


class SampleConflict(ServiceError):
    """A sample that contradicts what the stream has applied (409); ``sample`` is the
    culprit."""

    def __init__(self, index: int, sample: Sample, why: str, allowed: str) -> None:
        message = f"samples[{index}] (t={sample.t!r}, volume={sample.volume!r}): {why}"
        error = FieldError.of(f"samples[{index}].t", sample.t, allowed, message)
        culprit = SampleRef(index=index, t=sample.t, volume=sample.volume)
        super().__init__(409, message, [error], sample=culprit)


class UnfollowableSample(ServiceError):
    """A sample the stream's Scaler cannot follow (422): what it computed from it is not a
    finite number, or its filter or policy refused it. Nothing of the batch is applied."""

    def __init__(self, index: int, sample: Sample, why: str) -> None:
        allowed = "a volume the stream's filter and policy can follow to finite values"
        message = f"samples[{index}].volume={sample.volume!r} cannot be followed: {why}"
        error = FieldError.of(f"samples[{index}].volume", sample.volume, allowed, message)
        culprit = SampleRef(index=index, t=sample.t, volume=sample.volume)
        super().__init__(422, message, [error], sample=culprit)


class ConfigConflict(ServiceError):
    """A PUT of another configuration onto an existing stream, without ``reset`` (409)."""

    def __init__(self, stream_id: str) -> None:
        allowed = (
            "true, to replace the stream and forget its state and history; or the stream's "
            "current configuration (GET it), which changes nothing"
        )
        message = (
            f"stream {stream_id!r} exists with another configuration; PUT with ?reset=true "
            "replaces it and forgets its state and history"
        )
        super().__init__(409, message, [FieldError.of("reset", False, allowed, message)])


class Unavailable(ServiceError):
    """The storage cannot serve the request now (503); nothing was stored, retry later."""

    def __init__(self, error: StorageUnavailable) -> None:
        if error.in_doubt:
            # Not acknowledged, and perhaps not stored: a resend tells (it is a duplicate if
            # the commit went through).
            stored = "the commit's outcome is unknown; resend, a resend is never applied twice"
        else:
            stored = "nothing was stored; retry later"
        message = f"the storage is unavailable, {stored}: {error.reason}"
        super().__init__(503, message, headers={"Retry-After": "1"})


class StreamContended(ServiceError):
    """Other writers (replicas) kept committing to the stream while this batch was applied
    (503); nothing of the batch was stored, retry later."""

    def __init__(self, stream_id: str) -> None:
        message = (
            f"stream {stream_id!r} kept changing in the database while the batch was applied "
            f"({_ATTEMPTS} attempts); nothing was stored, retry later"
        )
        super().__init__(503, message, headers={"Retry-After": "1"})


class StreamBusy(Exception):
    """The stream's lock (or the database's write lock) is held, and the caller chose not to
    wait."""


@dataclass(frozen=True)
class BatchResult:
    """What a batch did: ``accepted`` samples applied, ``duplicates`` acknowledged again."""

    accepted: int
    duplicates: int
    operators: int
    decisions: list[Decision]


@dataclass
class _Loaded:
    scaler: Scaler
    revision: str
    last_t: float | None
    # Seconds per sample of the last batch (filtering and commit); None before the first.
    cost: float | None = None


class StreamService:
    """The streams of one ``storage``, each with its own lock and cached Scaler.

    ``retention`` decisions are kept per stream; batches above ``max_batch`` samples are
    refused; ``post_samples_async`` applies batches of up to ``inline_batch`` samples on the
    event loop; the Scalers of the ``cache_size`` streams used last stay in memory. ``metrics``,
    when given, follows every decision.
    """

    def __init__(
        self,
        storage: Store,
        *,
        retention: int,
        max_batch: int,
        inline_batch: int = 0,
        cache_size: int = CACHE_SIZE,
        metrics: Metrics | None = None,
    ) -> None:
        self.storage = storage
        self.retention = retention
        self.max_batch = max_batch
        self.inline_batch = inline_batch
        self._metrics = metrics
        self._guard = threading.Lock()
        self._locks: weakref.WeakValueDictionary[str, threading.Lock] = (
            weakref.WeakValueDictionary()
        )
        self.cache_size = cache_size
        self._scalers: OrderedDict[str, _Loaded] = OrderedDict()
        if metrics is not None:
            metrics.restore(storage.stream_ids(), storage.latest_decisions())

    def lock(self, stream_id: str) -> threading.Lock:
        """The lock that serialises changes to the stream (held while applying one)."""
        with self._guard:
            lock = self._locks.get(stream_id)
            if lock is None:
                lock = self._locks[stream_id] = threading.Lock()
            return lock

    def put(
        self, stream_id: str, config: StreamConfig, *, reset: bool = False
    ) -> tuple[StoredStream, Literal["created", "unchanged", "replaced"]]:
        """Create the stream; keep it as it is if it has this configuration; replace it
        (state and history start afresh) only with ``reset``. Raises ``InvalidInput`` naming
        each bad field, ``ConfigConflict`` for another configuration without ``reset``."""
        scaler = build_scaler(config)
        with self.lock(stream_id):
            outcome = self.storage.put_stream(
                stream_id, scaler.spec, config.operators, scaler.state_dict(), replace=reset
            )
            if outcome == "different":
                raise ConfigConflict(stream_id)
            if outcome != "unchanged":
                self._forget(stream_id)
                if self._metrics is not None:
                    if outcome == "replaced":
                        self._metrics.forget(stream_id)
                    self._metrics.created(stream_id)
            return self.get(stream_id), outcome

    def get(self, stream_id: str) -> StoredStream:
        """The stream; raises ``StreamNotFound``."""
        stream = self.storage.get_stream(stream_id)
        if stream is None:
            raise StreamNotFound(stream_id)
        return stream

    def list_streams(self, after: str | None = None, limit: int = -1) -> list[StoredStream]:
        """The first ``limit`` streams (all when negative) with ids after ``after``, by id."""
        return self.storage.list_streams(after, limit)

    def delete(self, stream_id: str) -> StoredStream:
        """Remove the stream and its history; returns it as it was. Raises
        ``StreamNotFound``."""
        with self.lock(stream_id):
            stream = self.get(stream_id)
            self._forget(stream_id)
            self.storage.delete_stream(stream_id)
            if self._metrics is not None:
                self._metrics.forget(stream_id)
        return stream

    def post_samples(
        self, stream_id: str, samples: Sequence[Sample], *, wait: bool = True
    ) -> BatchResult:
        """Apply a batch atomically; see the module docstring.

        Raises ``BatchTooLarge``, ``StreamNotFound``, ``SampleConflict``,
        ``UnfollowableSample`` or ``StreamContended``, changing nothing; with ``wait=False``,
        ``StreamBusy`` instead of waiting for the stream's lock or the database's.
        """
        if len(samples) > self.max_batch:
            raise BatchTooLarge(len(samples), self.max_batch)
        _check_increasing(samples)
        lock = self.lock(stream_id)
        if not lock.acquire(blocking=wait):
            raise StreamBusy(stream_id)
        try:
            for _ in range(_ATTEMPTS):
                result = self._apply(stream_id, samples, wait)
                if result is not None:
                    return result
        finally:
            lock.release()
        raise StreamContended(stream_id)

    async def post_samples_async(self, stream_id: str, samples: Sequence[Sample]) -> BatchResult:
        """``post_samples`` from the event loop.

        A batch of at most ``inline_batch`` samples is applied right here, on the loop, when
        its stream's Scaler is cached, its last batches cost at most ``INLINE_SECONDS`` for
        that many samples, and neither the stream's lock nor the database's write lock is
        held: its work (about 0.2 ms for one sample) costs less than the hop to a worker
        thread and back, which is what limits the rate of small batches otherwise. Everything
        else goes to the thread pool, so the loop never waits for a stream or for SQLite, nor
        works long on one batch.
        """
        if len(samples) <= self.inline_batch and self._cheap(stream_id, len(samples)):
            try:
                return self.post_samples(stream_id, samples, wait=False)
            except StreamBusy:
                pass
            except StorageUnavailable as error:
                raise Unavailable(error) from None
        return await run_in_threadpool(self.post_samples_or_503, stream_id, samples)

    def post_samples_or_503(self, stream_id: str, samples: Sequence[Sample]) -> BatchResult:
        """``post_samples``, with storage trouble as ``Unavailable`` (503)."""
        try:
            return self.post_samples(stream_id, samples)
        except StorageUnavailable as error:
            raise Unavailable(error) from None

    def _cheap(self, stream_id: str, count: int) -> bool:
        with self._guard:
            loaded = self._scalers.get(stream_id)
        return (
            loaded is not None
            and loaded.cost is not None
            and loaded.cost * count <= (INLINE_SECONDS)
        )

    def _apply(self, stream_id: str, samples: Sequence[Sample], wait: bool) -> BatchResult | None:
        """Apply the batch, the stream's lock held; ``None`` if the stream changed in the
        database since its Scaler was loaded (nothing applied: try again)."""
        loaded = self._load(stream_id)
        fresh = self._first_new(stream_id, loaded.last_t, samples)
        if fresh == len(samples):
            return BatchResult(0, len(samples), loaded.scaler.operators, [])
        began = time.perf_counter()
        try:
            decisions = _decide(loaded.scaler, samples, fresh)
            revision = self.storage.append(
                stream_id,
                loaded.revision,
                decisions,
                loaded.scaler.state_dict(),
                retention=self.retention,
                wait=wait,
            )
        except StaleRevision:
            self._forget(stream_id)
            return None
        except StorageBusy:
            self._forget(stream_id)
            raise StreamBusy(stream_id) from None
        except NonFiniteState as error:
            self._forget(stream_id)
            index = len(samples) - 1
            raise UnfollowableSample(index, samples[index], str(error)) from None
        except BaseException:
            self._forget(stream_id)
            raise
        per_sample = (time.perf_counter() - began) / len(decisions)
        loaded.cost = per_sample if loaded.cost is None else 0.5 * (loaded.cost + per_sample)
        loaded.revision, loaded.last_t = revision, decisions[-1].t
        if self._metrics is not None:
            self._metrics.decided(stream_id, decisions)
        return BatchResult(len(decisions), fresh, decisions[-1].operators, decisions)

    def latest(self, stream_id: str) -> Decision:
        """The stream's last decision; raises ``StreamNotFound`` or ``NoDecision``."""
        decision = self.storage.latest_decision(stream_id)
        if decision is None:
            self.get(stream_id)
            raise NoDecision(stream_id)
        return decision

    def history(self, stream_id: str, since: float | None, limit: int) -> list[Decision]:
        """Up to ``limit`` retained decisions with ``t > since``, oldest first; raises
        ``StreamNotFound``."""
        decisions = self.storage.history(stream_id, since, limit)
        if not decisions:
            self.get(stream_id)
        return decisions

    def _load(self, stream_id: str) -> _Loaded:
        """The stream's cached Scaler if the database still holds its revision, else one built
        from storage (then cached, evicting the least recently used beyond ``cache_size``)."""
        with self._guard:
            loaded = self._scalers.get(stream_id)
            if loaded is not None:
                self._scalers.move_to_end(stream_id)
        if loaded is not None:
            if self.storage.revision(stream_id) == loaded.revision:
                return loaded
            self._forget(stream_id)
        stored = self.storage.load(stream_id)
        if stored is None:
            raise StreamNotFound(stream_id)
        stream, state = stored
        scaler = Scaler.from_spec(stream.spec, stream.initial_operators)
        scaler.load_state_dict(state)
        loaded = _Loaded(scaler, stream.revision, stream.t)
        with self._guard:
            self._scalers[stream_id] = loaded
            while len(self._scalers) > self.cache_size:
                self._scalers.popitem(last=False)
        return loaded

    def _forget(self, stream_id: str) -> None:
        """Drop the stream's cached Scaler: the next batch starts from the stored state."""
        with self._guard:
            self._scalers.pop(stream_id, None)

    @property
    def cached(self) -> int:
        """Streams whose Scaler is cached now."""
        return len(self._scalers)

    def _first_new(self, stream_id: str, last_t: float | None, samples: Sequence[Sample]) -> int:
        """Index of the first sample after ``last_t``; raises ``SampleConflict`` unless every
        sample before it repeats a stored sample exactly."""
        fresh = 0
        while fresh < len(samples) and last_t is not None and samples[fresh].t <= last_t:
            fresh += 1
        if not fresh:
            return 0
        stored = self.storage.applied_volumes(stream_id, [s.t for s in samples[:fresh]])
        for index, sample in enumerate(samples[:fresh]):
            volume = stored.get(sample.t)
            if volume is None:
                raise SampleConflict(
                    index,
                    sample,
                    f"t is not after the last applied t={last_t!r} and no retained sample has "
                    "this t",
                    f"t > {last_t!r}, or a retained sample repeated exactly",
                )
            if volume != sample.volume:
                raise SampleConflict(
                    index,
                    sample,
                    f"a sample at this t was applied with volume={volume!r}",
                    f"volume={volume!r} (a retry of the applied sample), or t > {last_t!r}",
                )
        return fresh


def _decide(scaler: Scaler, samples: Sequence[Sample], fresh: int) -> list[Decision]:
    """The Scaler's decisions for ``samples[fresh:]``; ``UnfollowableSample`` for the first
    it refuses or decides with a non-finite filtered value or an unstorable count."""
    decisions = []
    for index in range(fresh, len(samples)):
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


def _check_increasing(samples: Sequence[Sample]) -> None:
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


def _field_error(prefix: str, spec: dict[str, Any], error: ValueError) -> FieldError:
    """``error`` (from building a part out of ``spec``) as the error of the field it names:
    a ``ParameterError`` carries its parameter, value and what is allowed; any other
    ``ValueError`` is about the part as a whole."""
    if isinstance(error, ParameterError):
        field = f"{prefix}.{error.param}" if prefix else error.param
        value = spec.get(error.param, error.value)
        return FieldError.of(field, value, error.allowed)
    # A plain ValueError (some guards raise one): the parameter its message starts with.
    message = str(error)
    for param in spec:
        if message.startswith((f"{param}=", f"{spec.get('name')}: {param}=")):
            field = f"{prefix}.{param}" if prefix else param
            return FieldError.of(field, spec[param], message)
    return FieldError.of(prefix or "config", spec, message)
