"""The Dockerfile read as ``docker build`` reads it, for the tests (no engine runs here): its
stages, each stage's instructions with the ones it inherits, and what a target sets.

>>> [name for name, _ in stages()]
['source', 'spark', 'service']
"""

from __future__ import annotations

import shlex
from pathlib import Path

DOCKERFILE = Path(__file__).parents[2] / "Dockerfile"
Instruction = tuple[str, str]  # (INSTRUCTION, its arguments on one line)


def instructions(text: str) -> list[Instruction]:
    """Every instruction, continuation lines joined, comments and blank lines left out."""
    found: list[Instruction] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = (pending + stripped).strip()
        pending = ""
        keyword, _, arguments = whole.partition(" ")
        found.append((keyword.upper(), " ".join(arguments.split())))
    return found


def stages(path: Path = DOCKERFILE) -> list[tuple[str, list[Instruction]]]:
    """(name, its instructions from FROM on), in the file's order."""
    found: list[tuple[str, list[Instruction]]] = []
    for keyword, arguments in instructions(path.read_text()):
        if keyword == "FROM":
            words = arguments.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else ""
            found.append((name, []))
        found[-1][1].append((keyword, arguments))
    return found


def chain(target: str, path: Path = DOCKERFILE) -> list[Instruction]:
    """The instructions that build ``target``: its parent stage's first, FROM after FROM."""
    named = dict(stages(path))
    own = named[target]
    parent = own[0][1].split()[0]
    return (chain(parent, path) if parent in named else []) + own


def image_env(target: str) -> dict[str, str]:
    """The variables ENV sets in ``target``'s image (later ones win)."""
    variables: dict[str, str] = {}
    for keyword, arguments in chain(target):
        if keyword == "ENV":
            for word in shlex.split(arguments):
                name, _, value = word.partition("=")
                variables[name] = value
    return variables


def image_user(target: str) -> str:
    """The USER ``target`` runs as: the last one set."""
    users = [arguments for keyword, arguments in chain(target) if keyword == "USER"]
    return users[-1] if users else "root"
