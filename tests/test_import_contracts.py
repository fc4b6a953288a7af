"""The import-linter contracts in pyproject.toml hold, and they can fail.

The contracts are the static half of the layering check (tests/test_import_hygiene.py is the run-time
half). A contract that never breaks proves nothing, so the tests below copy the package into a temporary
folder, add a forbidden import or a stale exemption, and expect ``lint-imports`` to refuse the copy.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent))

pytestmark = pytest.mark.skipif(
    LINT_IMPORTS is None, reason="import-linter is not installed (the test extra)"
)


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS is not None
    # cwd first on sys.path: grimp must analyse the copy, not the editable install.
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": str(Path(sys.executable).parent), "PYTHONPATH": str(cwd)},
    )


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "repo"
    shutil.copytree(REPO / "ctbench", dst / "ctbench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", dst / "pyproject.toml")
    return dst


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


def test_the_contracts_hold_on_the_tree() -> None:
    res = _lint(REPO)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


def test_a_copy_without_changes_passes(tmp_path: Path) -> None:
    """The copy is a faithful stand-in, so the failures below are caused by the one line each adds."""
    res = _lint(_copy(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("replay/engine.py", "import textual  # noqa", "never import Textual"),
        ("scoring/metrics.py", "from textual.widgets import Static  # noqa", "never import Textual"),
        ("model.py", "from ctbench.scoring import metrics  # noqa", "sit in layers"),
        ("replay/tools.py", "from ctbench.evaluate import runner  # noqa", "sit in layers"),
        ("authoring/bundle.py", "from ctbench.review import workflow  # noqa", "sit in layers"),
        ("review/blind_judge.py", "from ctbench.evaluate import runner  # noqa", "never through evaluate"),
        ("review/blind_judge.py", "from ctbench.evaluate import score  # noqa", "never through evaluate"),
        ("authoring/oracle_check.py", "from ctbench.evaluate import score  # noqa", "never through evaluate"),
        ("scoring/judge.py", "from ctbench.evaluate import score  # noqa", "imports no tool"),
        ("scoring/stats.py", "from ctbench.review import blind_judge  # noqa", "imports no tool"),
        ("scoring/trials.py", "from ctbench.authoring import oracle_check  # noqa", "imports no tool"),
        ("plugin_api/agent.py", "from ctbench.evaluate import runner  # noqa", "sit in layers"),
        (
            "plugin_api/exporter.py",
            "from ctbench.evaluate.export import export_atif  # noqa",
            "sit in layers",
        ),
        (
            "evaluate/agents/null.py",
            "from ctbench.evaluate.agents.base import Agent as A  # noqa",
            "old homes",
        ),
        ("evaluate/ray_executor.py", "from ctbench.evaluate.work import WorkUnit as W  # noqa", "old homes"),
        ("evaluate/trackb_io.py", "from ctbench.evaluate.prices import Prices as P  # noqa", "old homes"),
        ("plugins.py", "from ctbench.evaluate import runner  # noqa", "only the kits"),
        ("review/steps/reveal.py", "from ctbench.review.steps import blind  # noqa", "stand alone"),
        ("review/steps/merge.py", "from ctbench.review.steps.verdicts import rule  # noqa", "stand alone"),
        ("review/steps/seal.py", "from ctbench.review import workflow  # noqa", "their face"),
        ("review/steps/desk.py", "from ctbench.review import blind_app  # noqa", "their face"),
    ],
)
def test_a_forbidden_import_breaks_a_contract(tmp_path: Path, module: str, line: str, contract: str) -> None:
    repo = _copy(tmp_path)
    _append(repo / "ctbench" / module, line)
    res = _lint(repo)
    assert res.returncode == 1, res.stdout + res.stderr
    broken = [ln for ln in res.stdout.splitlines() if ln.endswith("BROKEN") or "BROKEN (" in ln]
    assert any(contract in ln for ln in broken), res.stdout


def test_an_exemption_that_matches_nothing_is_an_error(tmp_path: Path) -> None:
    """A cut that lands must take its exemption with it: a stale ``ignore_imports`` line fails the check."""
    repo = _copy(tmp_path)
    toml = repo / "pyproject.toml"
    text = toml.read_text(encoding="utf-8")
    marker = '    "ctbench.evaluate.cli -> ctbench.viewer.app",\n'
    assert marker in text
    toml.write_text(
        text.replace(marker, marker + '    "ctbench.model -> ctbench.no_such_module",\n', 1), encoding="utf-8"
    )
    res = _lint(repo)
    assert res.returncode != 0
    assert "ctbench.no_such_module" in res.stdout + res.stderr


def test_every_module_of_the_package_is_in_a_layer() -> None:
    """import-linter cannot say "every other module", so a new core module must be listed by hand.

    Without this test a module added beside ``model.py`` would sit outside both the layers contract and
    the no-Textual contract, and nothing would notice.
    """
    import pkgutil
    import tomllib

    import ctbench

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    listed = {name.strip() for layer in layers for name in layer.replace("|", ":").split(":")}
    present = {m.name for m in pkgutil.iter_modules(ctbench.__path__)}
    assert present - listed == set(), (
        f"add to the layers contract in pyproject.toml: {sorted(present - listed)}"
    )
    assert listed - present == set(), f"listed but not in ctbench/: {sorted(listed - present)}"

    textual = next(c for c in config["contracts"] if c.get("forbidden_modules") == ["textual"])
    core = {
        name for name in listed if name not in {"authoring", "review", "viewer", "tui", "evaluate", "replay"}
    }
    unguarded = {f"ctbench.{name}" for name in core} - set(textual["source_modules"])
    assert not unguarded, f"add to the no-Textual contract in pyproject.toml: {sorted(unguarded)}"


def test_every_review_step_is_in_the_independence_contract() -> None:
    """A new step module outside the list would be free to import the others; nothing else would notice."""
    import pkgutil
    import tomllib

    from ctbench.review import steps

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    listed = next(c for c in config["contracts"] if c["type"] == "independence")["modules"]
    present = {f"ctbench.review.steps.{m.name}" for m in pkgutil.iter_modules(steps.__path__)}
    assert present - {"ctbench.review.steps.desk"} == set(listed), (
        f"the independence contract in pyproject.toml lists {sorted(listed)}; the steps are {sorted(present)}"
    )
