"""The README's shell examples, run as written, with small sizes where they would take long.

A README whose commands fail is the first thing a newcomer meets; these tests run the
``steadyscale`` commands of its ``bash`` blocks that need no Spark, and its first-five-minutes
loop against a real ``steadyscale serve``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simulator.cli import main, parser

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
TRACES = ROOT.parent / "shared" / "data" / "traces"
# Commands that start no JVM; the Spark ones (paper, sweep, compare, trace) are tested in
# test_cli.py and test_sweep.py on small grids.
LOCAL_COMMANDS = {"denoise", "simulate", "events"}


def bash_blocks(path: Path = README) -> list[str]:
    """The ``bash`` blocks of a markdown file, backslash continuations joined."""
    blocks = re.findall(r"```bash\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)
    return [block.replace("\\\n", " ") for block in blocks]


def steadyscale_lines(path: Path = README) -> list[list[str]]:
    """Every ``.venv/bin/steadyscale`` command line of a markdown file, as arguments."""
    commands = []
    for block in bash_blocks(path):
        for line in block.splitlines():
            if line.startswith(".venv/bin/steadyscale "):
                commands.append(shlex.split(line, comments=True)[1:])
    return commands


def small(words: list[str], folder: Path) -> list[str] | None:
    """``words`` with outputs under ``folder`` and at most 300 s of synthetic workload; ``None``
    when the command needs a file this checkout lacks (the shared traces)."""
    changed = []
    for word in words:
        if word.startswith("../shared/data/traces/"):
            word = str(TRACES / word.removeprefix("../shared/data/traces/"))
            if not Path(word).exists():
                return None
        elif word.startswith(("out/", "logs/")):
            word = str(folder / word)
        changed.append(word)
    if words[0] == "simulate" and "--trace" not in words:
        if "--duration" in changed:
            changed[changed.index("--duration") + 1] = "300"
        else:
            changed += ["--duration", "300"]
    if words[0] == "events":
        changed += ["--duration", "20"]
    return changed


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda path: path.name)
def test_every_steadyscale_command_of_the_readme_and_docs_is_valid(path: Path) -> None:
    # Options renamed or removed break a page's commands: each must parse as written.
    for words in steadyscale_lines(path):
        try:
            parser().parse_args(words)
        except SystemExit as refused:
            pytest.fail(f"{path.name}: steadyscale {shlex.join(words)} is refused ({refused})")


def spark_small(words: list[str], folder: Path) -> list[str] | None:
    """A Spark command of the README with small sizes: 2 seeds, 200 s, one SNR, two policies."""
    command = small(words, folder)
    if command is None:
        return None
    paths = [word for word in command if word.endswith("*.csv")]
    for pattern in paths:  # the shell's glob, which shlex does not expand
        index = command.index(pattern)
        command[index : index + 1] = sorted(str(p) for p in Path(pattern).parent.glob("*.csv"))
    sizes = {
        "sweep": ["--seeds", "2", "--duration", "200"],
        "paper": ["--seeds", "2", "--sweep-seeds", "0"],
        "compare": ["--seeds", "2", "--workload", "paper", "--snr", "5", "--trace-duration",
                    "200", "--policy", "steadyscale", "hpa"],
        "trace": [],
    }[words[0]]  # fmt: skip
    return [*command, *sizes, "--master", "local[2]"]


@pytest.mark.spark
def test_every_spark_command_of_the_readme_runs_small(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = set()
    for words in steadyscale_lines() + steadyscale_lines(GUIDE):
        if words[0] == "events":  # the log that trace reads
            assert main(small(words, tmp_path) or []) == 0
        if words[0] not in {"sweep", "paper", "compare", "trace"}:
            continue
        command = spark_small(words, tmp_path)
        if command is None:
            continue
        assert main(command) == 0, (words, capsys.readouterr().err)
        ran.add(words[0])
    assert ran >= {"sweep", "paper", "trace"}


def test_the_readme_shows_the_commands_a_newcomer_needs_and_reads_in_five_minutes() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200
    commands = {words[0] for words in steadyscale_lines()}
    assert {"denoise", "simulate", "sweep", "serve"} <= commands
    assert {"events", "trace", "paper"} <= {words[0] for words in steadyscale_lines(GUIDE)}
    assert any("make run" in block for block in bash_blocks())
    assert "pip install steadyscale" not in README.read_text(encoding="utf-8")


def test_the_readme_picture_is_made_by_its_make_target_and_its_caption_tells_what_it_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = next(words for words in steadyscale_lines() if "out/readme" in words)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"$(BIN)/steadyscale {shlex.join(words)}\n" in makefile
    assert "cp out/readme/simulate.png docs/img/readme.png" in makefile
    command = [word if word != "out/readme" else str(tmp_path) for word in words]
    assert main(command) == 0
    table = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()}
    operations = {name: int(table[name][0]) + int(table[name][1]) for name in ("raw", "default")}
    caption = README.read_text(encoding="utf-8").split("(docs/img/readme.png)")[1]
    pattern = r"raw samples.*?makes ([\d,]+) scaling operations;.*?default.*?makes ([\d,]+)"
    stated = re.search(pattern, caption, flags=re.S)
    assert stated is not None
    assert [int(number.replace(",", "")) for number in stated.groups()] == [
        operations["raw"],
        operations["default"],
    ]


def test_every_image_of_the_docs_is_shown_by_a_page() -> None:
    # An image no page shows has no command beside it either: nobody can tell what made it,
    # and nobody regenerates it when its command's code changes (docs/img/risk.png was one).
    pages = "".join(path.read_text(encoding="utf-8") for path in [README, *DOCS])
    unshown = [image.name for image in sorted((ROOT / "docs" / "img").iterdir())
               if f"img/{image.name}" not in pages]  # fmt: skip
    assert unshown == []


def test_the_configuration_reference_gives_every_default_as_the_code_builds_it() -> None:
    from filters import available_filters, make_filter
    from scaling import make_guard

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (filter|guard) \| `(\w+)` \| `(\w+)` \| `([^`]*)` \|", text, re.M)
    documented = {(kind, name, parameter): value for kind, name, parameter, value in rows}
    guards = ["confidence", "cooldown", "hysteresis", "stabilization", "max_step"]
    built = {
        (kind, name, parameter): json.dumps(value)
        for kind, names, make in (
            ("filter", available_filters(), make_filter),
            ("guard", guards, make_guard),
        )  # fmt: skip
        for name in names
        for parameter, value in make(name).spec.items()
        if parameter != "name"
    }
    assert documented == built


def test_every_local_steadyscale_command_of_the_readme_and_guide_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = 0
    for words in steadyscale_lines() + steadyscale_lines(GUIDE):
        if words[0] not in LOCAL_COMMANDS or any(w.startswith("out/trace") for w in words):
            continue  # a trace made by `steadyscale trace` (Spark) is tested in test_cli.py
        command = small(words, tmp_path)
        if command is None:
            continue
        assert main(command) == 0, (words, capsys.readouterr().err)
        ran += 1
    assert ran >= 5


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README's loop uses curl")
def test_the_first_five_minutes_then_the_service_walkthrough_run_in_order_on_a_real_service(
    tmp_path: Path,
) -> None:
    # Followed in order, the pages used to collide: the service section PUT another
    # configuration to the README's stream and got 409, then 409 on its POSTs.
    loop = next(block for block in bash_blocks() if "/decision" in block and "for t in" in block)
    walkthrough = next(
        block for block in bash_blocks(ROOT / "docs" / "service.md") if "curl -X PUT" in block
    )
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "simulator.cli", "serve", "--port", str(port),
         "--data-dir", str(tmp_path / "data"), "--log-level", "warning"],
        env={**os.environ, "STEADYSCALE_TOKENS": ""},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
            time.sleep(0.2)
        script = loop.replace("localhost:8000", f"127.0.0.1:{port}").replace("seq 1 30", "seq 1 5")
        done = subprocess.run(
            ["bash", "-c", "set -e\n" + script], capture_output=True, text=True, timeout=120
        )
        # Every request of the walkthrough must succeed: any 4xx fails curl, and the script.
        strict = walkthrough.replace("localhost:8000", f"127.0.0.1:{port}").replace(
            "curl ", "curl -sS --fail-with-body "
        )
        walked = subprocess.run(
            ["bash", "-c", "set -e\n" + strict], capture_output=True, text=True, timeout=120
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert done.returncode == 0, done.stderr
    decisions = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"t"')]
    assert [decision["t"] for decision in decisions] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert all(decision["operators"] >= 1 for decision in decisions)
    assert walked.returncode == 0, (walked.stdout, walked.stderr)
    assert '"accepted":2' in walked.stdout.replace(" ", "")
    assert "steadyscale_" in walked.stdout  # /metrics answered, after every stream call
