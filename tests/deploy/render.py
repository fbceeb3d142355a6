"""What the deploy tests share: deploy/'s kustomizations rendered by a real kustomize, and the
schemas the rendered objects are checked against.

kustomize is the one built into kubectl (``kubectl kustomize``; ``make test`` installs Debian's
kubectl when it can, ``STEADYSCALE_KUBECTL`` names another). Without kubectl, or with a
kustomize older than v5, the tests that render are skipped as "kubectl NOT TESTED" with the
reason. A kustomization kustomize refuses raises ``KustomizeError`` with kustomize's message.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

from tests.not_tested import not_tested

DEPLOY = Path(__file__).parents[2] / "deploy"
OVERLAYS = ["single", "replicas", "monitoring"]
# The oldest Kubernetes these manifests target, the first with the HPA's tolerance field, and
# the newest schemas kubernetes-validate has.
VERSIONS = ["1.29.0", "1.33.0", kubernetes_validate.latest_version()]
OLDEST_KUSTOMIZE = (5, 0)


class KustomizeError(Exception):
    """kustomize refused a kustomization; the message is kustomize's own."""


@cache
def _kubectl() -> tuple[str | None, str]:
    """(kubectl's path, "") or (None, why not)."""
    given = os.environ.get("STEADYSCALE_KUBECTL")
    found = shutil.which(given or "kubectl")
    if found is None:
        return None, (
            f"no kubectl ({given or 'on PATH'}): install one (as root, make test-tools tries "
            "Debian's kubernetes-client), or set STEADYSCALE_KUBECTL"
        )
    answer = subprocess.run(
        [found, "version", "--client", "-o", "json"], capture_output=True, text=True, check=False
    )
    version = json.loads(answer.stdout or "{}").get("kustomizeVersion", "")
    numbers = tuple(int(part) for part in version.lstrip("v").split(".")[:2] if part.isdigit())
    if numbers < OLDEST_KUSTOMIZE:
        return None, (
            f"{found} carries kustomize {version or 'of unknown version'}; deploy/ needs v5 or "
            "later (kubectl 1.27 or later)"
        )
    return found, ""


def kubectl() -> str:
    """The path of a kubectl whose kustomize renders deploy/; skips, saying why, if none."""
    found, why = _kubectl()
    if found is None:
        not_tested("kubectl", why)
    return found


def render(folder: Path) -> list[dict[str, Any]]:
    """The objects ``kubectl kustomize folder`` renders, in its order."""
    done = subprocess.run(
        [kubectl(), "kustomize", str(folder)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise KustomizeError(done.stderr.strip() or f"exit {done.returncode}")
    return [document for document in yaml.safe_load_all(done.stdout) if document]


def strict(schema: Any) -> Any:
    """A CRD's schema with unknown fields refused, as the API server's strict field
    validation refuses them (a CRD schema lists its fields but does not forbid others)."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = {key: strict(value) for key, value in schema.items()}
    if "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        schema.setdefault("additionalProperties", False)
    return schema
