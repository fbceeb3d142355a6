from __future__ import annotations

import pytest

from scaling.spark import Executors, InMemoryExecutors


def test_the_fake_has_the_executor_interface_and_keeps_targets_within_bounds() -> None:
    executors = InMemoryExecutors(current=3, min_executors=2, max_executors=5)
    assert isinstance(executors, Executors)
    assert [executors.resize(n) for n in (4, 9, 0, 2)] == [4, 5, 2, 2]
    assert executors.current() == 2
    assert executors.history == [4, 5, 2, 2]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"current": -1}, "current"),
        ({"min_executors": 1.5}, "min_executors"),
        ({"min_executors": 3, "max_executors": 2}, "max_executors"),
        ({"latency": -0.1}, "latency"),
    ],
)
def test_bad_settings_name_the_field(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        InMemoryExecutors(**kwargs)  # type: ignore[arg-type]


def test_a_bad_target_is_refused_and_changes_nothing() -> None:
    executors = InMemoryExecutors(current=2)
    with pytest.raises(ValueError, match="executors=-1"):
        executors.resize(-1)
    assert executors.current() == 2 and executors.history == []
