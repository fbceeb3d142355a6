"""Baseline policies from the systems steadyscale is compared with, on one small interface.

Each baseline is a class in a file of its own with

* ``name`` (its registry key) and ``interval`` (seconds between two decisions);
* ``decide(observation) -> int``: the total number of instances it wants, given an
  ``Observation`` of the stage; deterministic, no clock, no I/O; the memory a policy needs
  (stabilisation windows, trigger histories, guard times) lives in the object;
* ``spec``: its settings as a JSON-ready dict with ``"name"``; ``make_policy(spec)`` rebuilds it.

``make_policy`` and ``available_policies`` find them by name; the simulator's queue model
(``simulator.queue``) runs any of them, and ``steadyscale`` itself through ``ScalerPolicy``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from scaling.baselines.observation import Observation

# name -> "module:Class"; imported on first use so that one policy's import cost or error
# never reaches the others.
_POLICIES = {
    "steadyscale": "scaling.baselines.steadyscale:ScalerPolicy",
    "hpa": "scaling.baselines.hpa:HpaPolicy",
    "ds2": "scaling.baselines.ds2:Ds2Policy",
    "dhalion": "scaling.baselines.dhalion:DhalionPolicy",
    "varga": "scaling.baselines.varga:VargaPolicy",
    "rules": "scaling.baselines.rules:RulePolicy",
    "streamcloud": "scaling.baselines.streamcloud:StreamCloudPolicy",
    "elysium": "scaling.baselines.elysium:ElysiumPolicy",
}


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
    return sorted(_POLICIES)


def make_policy(spec: str | Mapping[str, Any], **params: Any) -> Policy:
    """A fresh policy from its name and parameters, or from a ``spec`` dict with ``"name"``.

    Raises ``ValueError`` naming the policy or parameter and what is allowed.
    """
    if isinstance(spec, Mapping):
        params = {key: value for key, value in spec.items() if key != "name"} | params
        name = spec.get("name")
    else:
        name = spec
    if name not in _POLICIES:
        raise ValueError(
            f"policy name={name!r} is not allowed: choose one of {available_policies()}"
        )
    module, _, cls_name = _POLICIES[name].partition(":")
    cls = getattr(importlib.import_module(module), cls_name)
    try:
        policy: Policy = cls(**params)
    except TypeError as error:
        raise ValueError(f"policy {name!r}: {error}") from None
    return policy


__all__ = ["Observation", "Policy", "available_policies", "make_policy"]
