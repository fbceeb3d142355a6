"""ScalerCache: the Scalers of the streams used last, built from storage when missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.checkpoints import CheckpointPolicy
from service.errors import StreamNotFound
from service.models import Sample, StreamConfig
from service.scaler_cache import ScalerCache
from service.storage import Storage
from service.streams import StreamService

CONFIG = StreamConfig.model_validate({"filter": {"name": "raw"}, "policy": {"capacity": 50.0}})


def _streams(tmp_path: Path, names: list[str]) -> Storage:
    storage = Storage(tmp_path / "db")
    service = StreamService(storage, retention=100, max_batch=100)
    for name in names:
        service.put(name, CONFIG)
        service.post_samples(name, [Sample(t=0.0, volume=120.0), Sample(t=1.0, volume=260.0)])
    return storage


def test_a_scaler_is_built_from_the_stored_state_once_then_reused(tmp_path: Path) -> None:
    storage = _streams(tmp_path, ["a"])
    cache = ScalerCache(size=2)
    entry, fresh = cache.load(storage, "a")
    assert fresh and entry.last_t == 1.0 and entry.scaler.operators == 6
    again, fresh = cache.load(storage, "a")
    assert again is entry and not fresh
    cache.forget("a")
    assert cache.peek("a") is None and cache.load(storage, "a")[1]


def test_the_least_recently_used_stream_is_evicted_first(tmp_path: Path) -> None:
    storage = _streams(tmp_path, ["a", "b", "c"])
    cache = ScalerCache(size=2)
    cache.load(storage, "a")
    cache.load(storage, "b")
    cache.load(storage, "a")  # b is now the least recently used
    cache.load(storage, "c")
    assert len(cache) == 2
    assert cache.peek("b") is None and cache.peek("a") is not None


def test_a_missing_stream_is_not_found_and_not_cached(tmp_path: Path) -> None:
    storage = _streams(tmp_path, [])
    cache = ScalerCache()
    with pytest.raises(StreamNotFound):
        cache.load(storage, "nope")
    assert len(cache) == 0


def test_cost_halves_the_weight_of_the_past(tmp_path: Path) -> None:
    entry, _ = ScalerCache().load(_streams(tmp_path, ["a"]), "a")
    assert entry.cost is None
    entry.measured(4.0)
    entry.measured(2.0)
    assert entry.cost == 3.0


def test_a_scaler_loaded_between_checkpoints_is_the_one_that_took_every_sample(
    tmp_path: Path,
) -> None:
    storage = Storage(tmp_path / "db")
    service = StreamService(
        storage, retention=100, max_batch=100, checkpoints=CheckpointPolicy(5, 3600.0)
    )
    service.put("a", CONFIG)
    volumes = [100.0 + 40.0 * (t % 5) for t in range(9)]
    samples = [Sample(t=float(t), volume=v) for t, v in enumerate(volumes)]
    service.post_samples("a", samples[:7])  # 7 >= 5: the state is written, at t=6
    service.post_samples("a", samples[7:])  # 2 < 5: only the samples
    entry, fresh = ScalerCache().load(storage, "a")
    assert fresh and (entry.pending, entry.last_t) == (2, 8.0)
    cached = service.scalers.peek("a")
    assert cached is not None and cached.pending == 2
    assert entry.scaler.state_dict() == cached.scaler.state_dict()
    entry.committed("r1", 9.0, 3, None)
    assert (entry.revision, entry.last_t, entry.pending) == ("r1", 9.0, 5)
    entry.committed("r2", 10.0, 1, 1234.0)
    assert (entry.pending, entry.written) == (0, 1234.0)
