"""What every command shares: the parser class, list options, Spark options, value checks.

One style: an option that takes a list is repeatable and each use takes one or more values
(``add_list``: ``--snr 1 5 10`` is ``--snr 1 --snr 5 --snr 10``); everything else takes one
value. Options are never abbreviated (``allow_abbrev=False``), and arguments a command does not
know are refused with that command's usage, not the top-level one, and the closest option it
knows (``--snrr``: did you mean --snr?).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from simulator.experiments.specs import expand_spec, parse_value
from simulator.model.catalog import WORKLOADS
from simulator.model.noise import DEFINITIONS

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``add_subparsers()`` returns: each command module's ``add`` takes it."""

DEFAULT_DURATION = 1500.0
EXTRAS = {
    "filterpy": "filters",
    "scipy": "filters",
    "pyspark": "spark",
    "py4j": "spark",
    "pyarrow": "spark",
    "matplotlib": "plots",
    "tqdm": "plots",
    "fastapi": "service",
    "uvicorn": "service",
    "pydantic": "service",
    "pydantic_settings": "service",
    "prometheus_client": "service",
    "grpc": "service",
    "google": "service",
    "psycopg": "service",
    "psycopg_pool": "service",
}
"""Optional dependencies by top-level module, and the extra of pyproject.toml that installs it."""
SNR_FORMULAS = {
    "power": "mean(trend²) / σ²",
    "ac-power": "var(trend) / σ²",
    "amplitude": "mean(trend) / σ",
}
# The filters denoise and simulate run when none is given: the paper's rule
# (simulator.experiments.paper_grid), whose tvd and ekf estimate the noise online, so they
# suit any workload's or trace's units.
PAPER_RULE = ["raw", "moving_average:w=60", "tvd", "ekf"]


class Parser(argparse.ArgumentParser):
    """``ArgumentParser`` without abbreviations, whose unknown arguments are refused by the
    command they were given to (argparse would answer with the top-level usage)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(**kwargs)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            command = self._command(parsed)
            known = [flag for action in command._actions for flag in action.option_strings]
            hints = [
                f"did you mean {close[0]}?"
                for word in extra
                if word.startswith("--")
                for close in [difflib.get_close_matches(word.partition("=")[0], known, n=1)]
                if close
            ]
            command.error(" ".join([f"unrecognized arguments: {' '.join(extra)}", *hints]))
        return parsed

    def _command(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                found: argparse.ArgumentParser = action.choices.get(parsed.command, self)
                return found
        return self


def add_command(
    commands: Commands, name: str, run: Callable[[Any], int], **kwargs: Any
) -> argparse.ArgumentParser:
    """A subcommand whose ``run(args)`` returns the exit status."""
    command = commands.add_parser(name, **kwargs)
    assert isinstance(command, Parser)  # subcommands take the class of the parser above
    command.set_defaults(run=run)
    return command


def add_list(
    command: argparse.ArgumentParser,
    flag: str,
    *,
    metavar: str,
    help: str,
    type: Callable[[str], Any] = str,
    choices: Sequence[str] | None = None,
) -> None:
    """A list option: repeatable, one or more values each time; ``None`` when not given."""
    command.add_argument(
        flag, action="extend", nargs="+", metavar=metavar, help=help, type=type, choices=choices
    )


def add_spark_options(command: argparse.ArgumentParser) -> None:
    """``--master`` and ``--verbose``, the options of every command that runs on Spark."""
    command.add_argument(
        "--master",
        default="local[*]",
        metavar="URL",
        help="Spark master URL: local[*] (default), local[N], local-cluster[N,cores,MB], "
        "spark://host:port, k8s://..., yarn",
    )
    command.add_argument(
        "--verbose",
        action="store_true",
        help="Spark's own log (WARN and up) and progress bars; by default only errors show",
    )


def add_store_options(command: argparse.ArgumentParser, out: str) -> None:
    """``--out`` and ``--force``, the options of every command that keeps a grid's results."""
    command.add_argument("--out", default=out, metavar="DIR", help="default: %(default)s")
    command.add_argument(
        "--force",
        action="store_true",
        help="DIR holds another grid's results: delete them and start again (default: refuse)",
    )


def spark_session(master: str) -> Any:
    """``simulator.spark.session.spark_session``, imported on first use: PySpark is an extra."""
    from simulator.spark.session import spark_session as start

    return start(master)


def require(*modules: str) -> None:
    """Fail before any work when an optional dependency is missing (``main`` names its extra)."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(f"No module named {module!r}", name=module)


def snrs(values: Sequence[float]) -> list[float]:
    """``--snr`` values, each > 0 (``inf``: no noise)."""
    for snr in values:
        if not snr > 0:
            raise ValueError(f"--snr {snr:g} is not allowed: an SNR must be > 0 (inf: no noise)")
    return list(values)


def workloads(values: Sequence[str], hint: str = "") -> list[str]:
    """``--workload`` values: synthetic workload names (traces come with ``--trace``)."""
    allowed = ", ".join(name for name in sorted(WORKLOADS) if name != "trace")
    for workload in values:
        if workload not in WORKLOADS or workload == "trace":
            raise ValueError(f"--workload {workload!r} is not allowed: use {allowed}{hint}")
    return list(values)


def seeds(count: int, minimum: int, why: str = "") -> range:
    """Seeds ``1..count``; ``count`` must be at least ``minimum``."""
    if count < minimum:
        raise ValueError(f"--seeds={count} is not allowed: it must be >= {minimum}{why}")
    return range(1, count + 1)


def definition_help() -> str:
    return "how an SNR is defined: " + "; ".join(
        f"{name}: {formula}" for name, formula in SNR_FORMULAS.items() if name in DEFINITIONS
    )


def key_values(texts: Sequence[str], option: str, reserved: Mapping[str, str]) -> dict[str, Any]:
    """``KEY=VALUE`` texts as keyword arguments; VALUE as in the spec grammar (JSON or text).

    ``reserved`` maps keys that have an option of their own to that option.
    """
    params: dict[str, Any] = {}
    for text in texts:
        key, equals, value = text.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ValueError(f"{option} {text!r} is not of the form KEY=VALUE")
        if key in reserved:
            raise ValueError(f"{option} {key}=... is not allowed: use {reserved[key]}")
        params[key] = parse_value(value.strip())
    return params


def filter_settings(texts: Sequence[str], keep: Sequence[str] = ()) -> dict[str, Any]:
    """Label -> spec of every filter setting ``--filter`` writes: a text as given, each setting
    of a ``|`` grid spelled out; a text in ``keep`` (simulate's ``default``) stays itself.

    >>> list(filter_settings(["raw", "tvd:lam_per_sigma=5|10"]))
    ['raw', 'tvd:lam_per_sigma=5', 'tvd:lam_per_sigma=10']
    """
    settings: dict[str, Any] = {}
    for text in texts:
        if text in keep:
            settings[text] = text
            continue
        specs = expand_spec(text)
        for spec in specs:
            params = ",".join(f"{key}={value}" for key, value in spec.items() if key != "name")
            label = text if len(specs) == 1 else f"{spec['name']}:{params}"
            settings[label] = spec
    return settings


def finite_at_least(option: str, value: float, minimum: float) -> float:
    if not (math.isfinite(value) and value >= minimum):
        raise ValueError(f"{option}={value!r} is not allowed: it must be a number >= {minimum:g}")
    return value
