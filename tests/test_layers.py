"""The house rules, checked: every import points down the data flow, and no module is too long.

Layers, bottom to top: ``filters`` ← ``scaling`` ← the rooms of ``simulator`` (``model`` ←
``output`` ← ``spark`` ← ``experiments`` ← ``cli``) and ``service``. A module may import its own
layer or any below it, never one above. ``simulator`` reaches ``service`` in one place only, the
command that serves (``simulator/cli/serve.py``); ``service`` never imports ``simulator``.
Imports inside functions count: a lazy import upward is still an arrow upward.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = ("filters", "scaling", "simulator", "service")
ORDER = {
    "filters": 0,
    "scaling": 1,
    "simulator.model": 2,
    "simulator.output": 3,
    "simulator.spark": 4,
    "simulator.experiments": 5,
    "simulator.cli": 6,
    "simulator": 6,  # the package's __init__: the public names, re-exported from below
    "service": 2,  # beside simulator: above scaling, and it never imports simulator
}
ALLOWED = {("simulator/cli/serve.py", "service")}
"""(module, package) pairs that cross sideways on purpose."""
MAX_LINES = 400
GENERATED = ("_pb2.py", "_pb2_grpc.py")


def modules() -> list[Path]:
    return sorted(
        path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if not path.name.endswith(GENERATED)
    )


def layer(name: str) -> str | None:
    """The layer of a dotted module name: its longest prefix in ``ORDER``."""
    parts = name.split(".")
    for size in range(len(parts), 0, -1):
        prefix = ".".join(parts[:size])
        if prefix in ORDER:
            return prefix
    return None


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_import_points_down(path: Path) -> None:
    relative = path.relative_to(ROOT)
    own = layer(".".join(relative.with_suffix("").parts))
    assert own is not None
    for name in imported(path):
        target = layer(name)
        if target is None or (str(relative), target.split(".")[0]) in ALLOWED:
            continue
        sideways = {own.split(".")[0], target.split(".")[0]} == {"simulator", "service"}
        assert not sideways and ORDER[target] <= ORDER[own], f"{relative} imports {name}"


@pytest.mark.parametrize("path", modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_module_is_over_400_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines"


def test_the_layers_are_checked_at_all() -> None:
    # An upward import is seen: scaling importing simulator would fail the first test.
    assert layer("simulator.model.workloads") == "simulator.model"
    assert ORDER[layer("scaling.guards") or ""] < ORDER[layer("simulator.cli.sweep") or ""]
    assert imported(ROOT / "simulator" / "cli" / "serve.py") >= {"service.app"}
