"""What every named, configurable part of steadyscale shares: filters, guards and policies.

A part is a class with a ``name`` (its registry key) whose constructor arguments are its
settings, each stored unchanged under its own name and validated in ``__init__``; learned state
lives in underscore attributes. From that convention alone ``Configurable`` gives ``spec``,
``state_dict()``/``load_state_dict()`` and ``repr``, and a ``Registry`` lists and builds the
parts of one kind by name or from a spec dict. Invalid settings raise ``ParameterError``, a
``ValueError`` that carries ``param``, ``value`` and ``allowed``, so that callers (the service)
point at the field without reading the message.

>>> from filters import make_filter
>>> make_filter({"name": "ewma", "alpha": 0.5}).spec
{'name': 'ewma', 'alpha': 0.5}
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import math
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Generic, NoReturn, TypeVar

import numpy as np

# Constructor parameter names per class: inspect.signature costs ~10 µs, and the service asks
# for specs and states on every batch.
_PARAMETERS: dict[type, tuple[str, ...]] = {}


class Configurable:
    """Hyperparameters in, ``spec`` out; learned state exported and loaded mechanically.

    Shared by the denoisers, the scaling guards and the baseline policies. Subclasses set the
    class attribute ``name`` (their registry key), store each constructor argument under its
    own name and keep learned state in underscore attributes.
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


T = TypeVar("T", bound=Configurable)


class Registry(Generic[T]):
    """The parts of one kind by name: ``names()`` lists them, ``build()`` makes one.

    >>> from filters.ewma import EWMA
    >>> from filters.moving_average import MovingAverage
    >>> smoothers = Registry("smoother", (MovingAverage, EWMA))
    >>> smoothers.names()
    ['ewma', 'moving_average']
    >>> smoothers.build("ewma", alpha=0.5).spec
    {'name': 'ewma', 'alpha': 0.5}
    >>> smoothers.build({"name": "ewma", "alfa": 0.5})
    Traceback (most recent call last):
    ...
    filters.configurable.ParameterError: ewma: unknown parameter 'alfa'; ... did you mean 'alpha'?
    """

    def __init__(self, kind: str, classes: Iterable[type[T]]) -> None:
        self.kind = kind
        self._classes = {cls.name: cls for cls in classes}

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._classes)

    def build(self, spec: str | Mapping[str, Any], **params: Any) -> T:
        """A fresh part from its name and settings, or from a spec dict with ``"name"``.

        Unknown names and settings raise ``ParameterError`` saying what is allowed.
        """
        if isinstance(spec, Mapping):
            if params:
                raise ValueError(
                    "pass either a spec dict or a name with keyword parameters, not both"
                )
            params = dict(spec)
            name = params.pop("name", None)
            if name is None:
                allowed_names = f"allowed names: {self.names()}"
                raise ParameterError(
                    f"spec {dict(spec)!r} has no 'name'; {allowed_names}",
                    param="name",
                    value=None,
                    allowed=allowed_names,
                )
        else:
            name = spec
        cls = self._classes.get(name) if isinstance(name, str) else None
        if cls is None:
            allowed_names = f"allowed names: {self.names()}"
            hint = did_you_mean(name, self.names())
            raise ParameterError(
                f"name={name!r} is not a {self.kind}; {allowed_names}{hint}",
                param="name",
                value=name,
                allowed=allowed_names,
            )
        allowed = cls.parameters()
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise ParameterError(
                f"{name}: unknown parameter {unknown[0]!r}; allowed parameters: {allowed}"
                f"{did_you_mean(unknown[0], allowed)}",
                param=unknown[0],
                value=params[unknown[0]],
                allowed=f"allowed parameters: {allowed}",
            )
        return cls(**params)


def did_you_mean(given: object, allowed: Iterable[str]) -> str:
    """``"; did you mean 'tvd'?"`` for the closest of ``allowed`` to a mistyped name, else ``""``.

    >>> did_you_mean("tdv", ["raw", "tvd", "ekf"]), did_you_mean("kalman", ["raw", "tvd"])
    ("; did you mean 'tvd'?", '')
    """
    if not isinstance(given, str):
        return ""
    close = difflib.get_close_matches(given, list(allowed), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


class MissingDependency(ModuleNotFoundError):
    """A package that one filter (or one of its settings) needs is not installed.

    A ``ModuleNotFoundError`` whose ``name`` is the package (``filterpy``, ``scipy``), which
    also says which ``extra`` of steadyscale installs it and, like ``ParameterError``, which
    ``param`` asked for it and with which ``value`` (``"name"`` and the filter's name when the
    filter needs it whatever its settings), and what would do ``instead`` when the filter knows,
    so that callers (the service) point at the field without reading the message.
    """

    def __init__(
        self,
        message: str,
        *,
        name: str | None,
        extra: str,
        param: str,
        value: object,
        instead: str | None = None,
    ) -> None:
        super().__init__(message, name=name)
        self.extra = extra
        self.param = param
        self.value = value
        self.instead = instead


def optional(
    module: str,
    needed_by: str,
    extra: str = "filters",
    *,
    param: str = "name",
    value: object = None,
    instead: str | None = None,
) -> Any:
    """``module`` imported, or ``MissingDependency`` saying which extra installs it, and which
    ``param`` (set to ``value``) needs it, and what would do ``instead``.

    The base install (embedding: numpy only) leaves out what one filter needs alone.

    >>> optional("math", "a doctest").sqrt(4.0)
    2.0
    >>> try:
    ...     optional("no_such_module", "the ekf filter", param="name", value="ekf")
    ... except MissingDependency as missing:
    ...     missing.name, missing.extra, missing.param, missing.value
    ('no_such_module', 'filters', 'name', 'ekf')
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as missing:
        # The package that is missing: ``module``'s own, or one that it imports.
        package = (missing.name or module).partition(".")[0]
        raise MissingDependency(
            f"{needed_by} needs {package}, which is not installed: "
            f"pip install 'steadyscale[{extra}]'",
            name=package,
            extra=extra,
            param=param,
            value=value,
            instead=instead,
        ) from None


def reject(owner: str, param: str, value: object, allowed: str) -> NoReturn:
    """Raise the ``ParameterError`` for ``param`` of ``owner``: ``value`` is not ``allowed``.

    >>> reject("hysteresis", "band", 1.5, "band must be a number >= 0 and < 1")
    Traceback (most recent call last):
    ...
    filters.configurable.ParameterError: hysteresis: band=1.5 is not allowed: band must be ...
    """
    message = f"{owner}: {param}={value!r} is not allowed: {allowed}"
    raise ParameterError(message, param=param, value=value, allowed=allowed)


def check_number(
    filter_name: str,
    param: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    integer: bool = False,
    nullable: bool = False,
) -> None:
    """Raise ``ParameterError`` (a ``ValueError``) unless ``value`` is a finite number in the
    allowed range (or None, where ``nullable``).

    >>> check_number("ewma", "alpha", 1.5, minimum=0, maximum=1, exclusive_minimum=True)
    Traceback (most recent call last):
    ...
    filters.configurable.ParameterError: ewma: alpha=1.5 is not allowed: alpha must be ... <= 1
    """
    value_type = type(value)
    if value is None and nullable:
        return
    if value_type is float or value_type is int:  # a Scaler checks every sample: quickly
        numeric, exact = True, value_type is int
    else:
        numeric = isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool
        )
        # Integers are compared exactly whatever their size (float() of a 400-digit one would
        # overflow), and refused beyond the largest float: every part computes in floats, so
        # such a setting could never take a sample.
        exact = isinstance(value, int | np.integer)
    ok = numeric and (
        abs(value) <= sys.float_info.max if exact else math.isfinite(value)  # type: ignore[arg-type]
    )
    if ok and integer and not exact:
        ok = float(value).is_integer()  # type: ignore[arg-type]
    if ok and minimum is not None:
        ok = value > minimum if exclusive_minimum else value >= minimum  # type: ignore[operator]
    if ok and maximum is not None:
        ok = value <= maximum  # type: ignore[operator]
    if not ok:
        # Only now: a Scaler checks every sample, and the message is most of the cost.
        kind = "an integer" if integer else "a number"
        bounds = []
        if minimum is not None:
            bounds.append(f"{'>' if exclusive_minimum else '>='} {minimum:g}")
        if maximum is not None:
            bounds.append(f"<= {maximum:g}")
        allowed = f"{param} must be {kind}" + (" " + " and ".join(bounds) if bounds else "")
        allowed += ", or None" if nullable else ""
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
