"""The contract every steadyscale denoiser follows.

A denoiser turns a stream of volume samples into a filtered stream, one sample at a time and
causally: the output for sample ``t`` depends only on samples ``0..t``. Appending samples never
changes an output already given.

The conventions below make every filter look the same to the service, the simulator and the
embedders, and keep ``spec``, ``state_dict`` and validation mechanical instead of hand-written:

* the constructor arguments are the hyperparameters; each is stored unchanged under its own name
  and validated in ``__init__`` (``ValueError`` naming the parameter, the value and what is
  allowed);
* learned state lives in underscore attributes created by ``reset()``; ``state_dict()`` exports
  them as JSON-compatible values and ``load_state_dict()`` converts them back to the types that
  ``reset()`` created, so continuing from a loaded state is exact;
* ``update(x)`` validates the sample and calls ``_update(x)``, the only method a filter must write.

>>> from filters import make_filter
>>> f = make_filter("moving_average", w=3)
>>> [f.update(v) for v in (3.0, 6.0, 9.0, 12.0)]
[3.0, 4.5, 6.0, 9.0]
>>> f.spec
{'name': 'moving_average', 'w': 3}

"""

from __future__ import annotations

import abc
import inspect
import math
import numbers
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, TypeVar

import numpy as np

# Constructor parameter names per class: inspect.signature costs ~10 µs, and the service asks
# for specs and states on every batch.
_PARAMETERS: dict[type, tuple[str, ...]] = {}


class Configurable:
    """Hyperparameters in, ``spec`` out; learned state exported and loaded mechanically.

    Shared by the denoisers and by the scaling guards. Subclasses set the class attribute
    ``name`` (their registry key), store each constructor argument under its own name and keep
    learned state in underscore attributes.
    """

    name: ClassVar[str]

    @classmethod
    def parameters(cls) -> list[str]:
        """Names of the hyperparameters, in constructor order."""
        names = _PARAMETERS.get(cls)
        if names is None:
            signature = inspect.signature(cls.__init__)
            names = _PARAMETERS[cls] = tuple(p for p in signature.parameters if p != "self")
        return list(names)

    @property
    def spec(self) -> dict[str, Any]:
        """``{"name": ..., **hyperparameters}``; building from it gives an equal object."""
        return {"name": self.name, **{p: getattr(self, p) for p in self.parameters()}}

    def state_dict(self) -> dict[str, Any]:
        """The spec and the learned state, as JSON-serialisable values."""
        return {"spec": self.spec, "state": self._export_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from a state taken by ``state_dict()`` of an object with the same spec.

        Raises ``ValueError`` (and changes nothing) when the spec or the state's fields differ.
        """
        if not isinstance(state, dict) or set(state) != {"spec", "state"}:
            raise ValueError("state must be a dict with the keys 'spec' and 'state'")
        if state["spec"] != self.spec:
            raise ValueError(f"state was taken from {state['spec']!r}, not from {self.spec!r}")
        self._import_state(state["state"])

    def _export_state(self) -> dict[str, Any]:
        return {key: _to_json(value) for key, value in self._learned().items()}

    def _import_state(self, values: dict[str, Any]) -> None:
        fresh = type(self)(**{p: getattr(self, p) for p in self.parameters()})._learned()
        if not isinstance(values, dict) or set(values) != set(fresh):
            got = sorted(values) if isinstance(values, dict) else values
            raise ValueError(f"state fields {got!r} do not match {sorted(fresh)!r}")
        converted = {key: _from_json(values[key], like=fresh[key]) for key in fresh}
        self.__dict__.update(converted)

    def _learned(self) -> dict[str, Any]:
        return {key: value for key, value in vars(self).items() if key.startswith("_")}

    def __repr__(self) -> str:
        params = ", ".join(f"{p}={getattr(self, p)!r}" for p in self.parameters())
        return f"{type(self).__name__}({params})"


class Denoiser(Configurable, abc.ABC):
    """Base class of the online denoisers.

    Subclasses store their hyperparameters, create their learned state in ``reset()`` and
    implement ``_update``. A filter that knows how uncertain its output is sets
    ``reports_spread`` and overrides ``spread``.
    """

    reports_spread: ClassVar[bool] = False

    @property
    def spread(self) -> float | None:
        """Standard error of the last output (volume units), or ``None`` when not known."""
        return None

    @abc.abstractmethod
    def _update(self, x: float) -> float:
        """Consume one finite sample and return the filtered value."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Forget every sample seen; the filter behaves as newly constructed."""

    def update(self, x: float) -> float:
        """Feed one sample (a finite number) and return the filtered value as a ``float``."""
        return self._update(_finite_sample(x, "x"))

    def filter(self, xs: Iterable[float]) -> np.ndarray:
        """Feed many samples in order; same result as calling ``update`` on each.

        The whole input is validated first, so a bad sample leaves the filter untouched.
        """
        values = np.asarray(list(xs) if not isinstance(xs, np.ndarray) else xs, dtype=float)
        if values.ndim != 1:
            raise ValueError(f"xs must be one-dimensional, got shape {values.shape}")
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            index = int(bad[0])
            value = float(values[index])
            raise ValueError(f"xs[{index}]={value!r} is not allowed: samples must be finite")
        update = self._update
        return np.array([update(x) for x in values.tolist()], dtype=float)


T = TypeVar("T", bound=Configurable)


class ParameterError(ValueError):
    """A ``ValueError`` about one parameter: ``param``, the ``value`` given and what is
    ``allowed``, so callers (the service) can point at the field without parsing the message.

    >>> try:
    ...     check_number("ewma", "alpha", 2.0, maximum=1)
    ... except ParameterError as error:
    ...     error.param, error.value, error.allowed
    ('alpha', 2.0, 'alpha must be a number <= 1')
    """

    def __init__(self, message: str, *, param: str, value: object, allowed: str) -> None:
        super().__init__(message)
        self.param = param
        self.value = value
        self.allowed = allowed


def build(
    kind: str, registry: Mapping[str, type[T]], spec: str | dict[str, Any], **params: Any
) -> T:
    """Build a registered class from its name and parameters, or from a spec dict.

    The shared body of ``make_filter`` and ``make_guard``: unknown names and parameters raise
    ``ValueError`` saying what is allowed.
    """
    if isinstance(spec, dict):
        if params:
            raise ValueError("pass either a spec dict or a name with keyword parameters, not both")
        params = dict(spec)
        name = params.pop("name", None)
        if name is None:
            allowed_names = f"allowed names: {sorted(registry)}"
            raise ParameterError(
                f"spec {spec!r} has no 'name'; {allowed_names}",
                param="name",
                value=None,
                allowed=allowed_names,
            )
    else:
        name = spec
    cls = registry.get(name) if isinstance(name, str) else None
    if cls is None:
        allowed_names = f"allowed names: {sorted(registry)}"
        raise ParameterError(
            f"name={name!r} is not a {kind}; {allowed_names}",
            param="name",
            value=name,
            allowed=allowed_names,
        )
    allowed = cls.parameters()
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ParameterError(
            f"{name}: unknown parameter {unknown[0]!r}; allowed parameters: {allowed}",
            param=unknown[0],
            value=params[unknown[0]],
            allowed=f"allowed parameters: {allowed}",
        )
    return cls(**params)


def _finite_sample(x: object, field: str) -> float:
    if type(x) is float:
        value = x
    elif isinstance(x, numbers.Real) and not isinstance(x, bool):
        value = float(x)
    else:
        raise ValueError(f"{field}={x!r} is not allowed: samples must be finite numbers")
    if not math.isfinite(value):
        raise ValueError(f"{field}={x!r} is not allowed: samples must be finite numbers")
    return value


def check_number(
    filter_name: str,
    param: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    integer: bool = False,
) -> None:
    """Raise ``ParameterError`` (a ``ValueError``) unless ``value`` is a finite number in the
    allowed range.

    >>> check_number("ewma", "alpha", 1.5, minimum=0, maximum=1, exclusive_minimum=True)
    Traceback (most recent call last):
    ...
    filters.base.ParameterError: ewma: alpha=1.5 is not allowed: alpha must be a number > 0 and <= 1
    """
    kind = "an integer" if integer else "a number"
    bounds = []
    if minimum is not None:
        bounds.append(f"{'>' if exclusive_minimum else '>='} {minimum:g}")
    if maximum is not None:
        bounds.append(f"<= {maximum:g}")
    allowed = f"{param} must be {kind}" + (" " + " and ".join(bounds) if bounds else "")
    numeric = isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool
    )
    # Integers are exact whatever their size; float() of a 400-digit one would overflow.
    exact = isinstance(value, int | np.integer)
    ok = numeric and (exact or math.isfinite(value))  # type: ignore[arg-type]
    if ok and integer and not exact:
        ok = float(value).is_integer()  # type: ignore[arg-type]
    if ok and minimum is not None:
        ok = value > minimum if exclusive_minimum else value >= minimum  # type: ignore[operator]
    if ok and maximum is not None:
        ok = value <= maximum  # type: ignore[operator]
    if not ok:
        raise ParameterError(
            f"{filter_name}: {param}={value!r} is not allowed: {allowed}",
            param=param,
            value=value,
            allowed=allowed,
        )


def check_choice(filter_name: str, param: str, value: object, choices: Iterable[object]) -> None:
    """Raise ``ParameterError`` (a ``ValueError``) unless ``value`` is one of ``choices``."""
    allowed = list(choices)
    if value not in allowed:
        raise ParameterError(
            f"{filter_name}: {param}={value!r} is not allowed: {param} must be one of {allowed!r}",
            param=param,
            value=value,
            allowed=f"{param} must be one of {allowed!r}",
        )


def _to_json(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, deque | list | tuple):
        return [_to_json(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _from_json(value: Any, *, like: Any) -> Any:
    if isinstance(like, np.ndarray):
        return np.array(value, dtype=like.dtype)
    if isinstance(like, deque):
        return deque(value, maxlen=like.maxlen)
    if isinstance(like, float) and isinstance(value, int):
        return float(value)
    return value
