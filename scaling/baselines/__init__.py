"""Baseline policies from the systems steadyscale is compared with, on one small interface.

Each baseline is a class in a file of its own with

* ``name`` (its registry key) and ``interval`` (seconds between two decisions);
* ``decide(observation) -> int``: the total number of instances it wants, given an
  ``Observation`` of the stage; deterministic, no clock, no I/O; the memory a policy needs
  (stabilisation windows, trigger histories, guard times) lives in the object;
* ``spec``: its settings as a JSON-ready dict with ``"name"``; ``make_policy(spec)`` rebuilds it.

``make_policy`` and ``available_policies`` find them by name in ``POLICIES``, the registry
style of the filters and guards (every policy is a ``filters.base.Configurable``); the
simulator's queue model (``simulator.model.queue``) runs any of them, and ``steadyscale`` itself
through ``ScalerPolicy``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from filters.base import Configurable, Registry
from scaling.baselines.dhalion import DhalionPolicy
from scaling.baselines.ds2 import Ds2Policy
from scaling.baselines.elysium import ElysiumPolicy
from scaling.baselines.flink import FlinkPolicy
from scaling.baselines.hpa import HpaPolicy
from scaling.baselines.observation import Observation
from scaling.baselines.rules import RulePolicy
from scaling.baselines.steadyscale import ScalerPolicy
from scaling.baselines.streamcloud import StreamCloudPolicy
from scaling.baselines.varga import VargaPolicy

POLICIES: Registry[Configurable] = Registry(
    "policy",
    (
        ScalerPolicy,
        HpaPolicy,
        Ds2Policy,
        DhalionPolicy,
        VargaPolicy,
        RulePolicy,
        StreamCloudPolicy,
        ElysiumPolicy,
        FlinkPolicy,
    ),
)


@runtime_checkable
class Policy(Protocol):
    """What the queue model needs from a policy."""

    name: str
    interval: float

    def decide(self, observation: Observation) -> int: ...

    @property
    def spec(self) -> dict[str, Any]: ...


def available_policies() -> list[str]:
    """Registry names of the policies, sorted."""
    return POLICIES.names()


def make_policy(spec: str | Mapping[str, Any], **params: Any) -> Policy:
    """A fresh policy from its name and parameters, or from a ``spec`` dict with ``"name"``.

    Raises ``ParameterError`` (a ``ValueError``) naming the policy or parameter and what is
    allowed.
    """
    policy = POLICIES.build(spec, **params)
    assert isinstance(policy, Policy)
    return policy


__all__ = ["POLICIES", "Observation", "Policy", "available_policies", "make_policy"]
