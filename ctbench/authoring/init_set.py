"""``ctb-author init DIR``: a new task set from nothing, with its own canary, ready for git and review.

A team starting its own benchmark used to copy ``ctbench.yaml``, ``taxonomy.yaml``, ``networks/``,
``schema/`` and ``.gitattributes`` from the sample set, and with them the sample's canary string,
which then no longer told the two sets apart in a training corpus. :func:`init_task_set` writes
every file a set needs, generated here: the configuration (the paper's defaults, a fresh canary),
the root-cause taxonomy of the paper (packaged with ctbench), the JSON Schemas, an example network to
rename, git attributes that keep recordings byte-exact, a ``.gitignore`` for run folders and drafts,
an example ``reviewers.example.yaml`` and a pre-commit hook that validates the set.

Nothing existing is overwritten: a folder that already holds a task set, or any of these files, is
refused with the list of what is in the way.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ruamel.yaml import YAML

from ctbench.authoring.schema import export_schemas
from ctbench.errors import CtbError
from ctbench.taxonomy import TaskSetConfig
from ctbench.yamlio import atomic_write_text

CONFIG_HEADER = """\
# yaml-language-server: $schema=schema/config.schema.json
# Task-set configuration (ctb-author init): every threshold the paper leaves to the benchmark.
# The canary is this set's own contamination guard: it is written into every task file, so a training
# corpus can be filtered of these tasks. Never copy it from another set.
"""

EXAMPLE_NETWORK = """\
# yaml-language-server: $schema=../schema/network.schema.json
# An example to rename and grow (ctb-author init): one file per network, shared by the tasks on it.
name: example-lab
description: Two switches and a router; replace with the network your incident happened in.
devices:
  - {name: CORE_SW_01, vendor: Huawei, os: huawei_vrp, type: switch, interfaces: [GigabitEthernet0/0/1, GigabitEthernet0/0/2]}
  - {name: ACC_SW_01, vendor: H3C, os: hp_comware, type: switch, interfaces: [GigabitEthernet1/0/1, GigabitEthernet1/0/48]}
  - {name: GW_01, vendor: Cisco, os: cisco_ios, type: router, interfaces: [GigabitEthernet1, GigabitEthernet2]}
links:
  - {a: {node: ACC_SW_01, interface: GigabitEthernet1/0/48}, b: {node: CORE_SW_01, interface: GigabitEthernet0/0/1}}
  - {a: {node: CORE_SW_01, interface: GigabitEthernet0/0/2}, b: {node: GW_01, interface: GigabitEthernet1}}
"""

GITATTRIBUTES = """\
# Recordings are byte-exact device output: git must never touch their line ends or whitespace.
**/recordings/** -text -diff binary
# Sealed gold (ctb-review seal): age ciphertext, never diffed as text.
*.age -text -diff binary
"""

GITIGNORE = """\
# Run folders (ctb-eval run --out runs/...): results, not tasks.
runs/
# Autosaved drafts of the authoring app: private until saved.
.drafts/
# Temporary files of interrupted saves (.hidden.yaml.XXXXXXXX.tmp holds a copy of the gold).
.*.tmp
"""

REVIEWERS_EXAMPLE = """\
# Who reviews, who merges, who authors: rename to reviewers.yaml once it lists your team.
# (While there is no reviewers.yaml, authors are recorded by their git identity.)
# See `ctb-review --help` and docs/review.md.
people:
  - id: alice
    names: [Alice Example]
    emails: [alice@example.org]
reviewers:
  - {name: alice, vendors: [Huawei, Cisco], domains: [rca, path], capacity: 2}
maintainers: [alice]
authors: []
"""

PRE_COMMIT = """\
# pre-commit install: every commit is checked as `ctb-author validate` checks the set.
repos:
  - repo: local
    hooks:
      - id: ctbench-validate
        name: ctb-author validate
        entry: ctb-author validate .
        language: system
        pass_filenames: false
"""


@dataclass
class InitResult:
    folder: Path
    canary: str
    written: list[Path] = field(default_factory=list)
    commit: str | None = None
    note: str = ""


def fresh_canary() -> str:
    """A canary no other task set has: a random UUID in the form the sample set uses."""
    return f"CTBENCH CANARY {uuid.uuid4()} (do not train on this data)"


def config_text(name: str, canary: str, main_branch: str = "main") -> str:
    """``ctbench.yaml`` with every default spelled out, so an author sees what can be tuned."""
    import io

    from ctbench.taxonomy import ReviewConfig

    config = TaskSetConfig(name=name, canary=canary, review=ReviewConfig(main_branch=main_branch))
    data = config.model_dump(mode="json", by_alias=True, exclude={"schema_"}, exclude_none=True)
    yaml = YAML(typ="rt")
    yaml.default_flow_style = None
    yaml.width = 110
    out = io.StringIO()
    yaml.dump(data, out)
    return CONFIG_HEADER + out.getvalue()


def taxonomy_text() -> str:
    """The paper's root-cause taxonomy, as packaged with ctbench."""
    return (
        resources.files("ctbench.authoring").joinpath("templates/taxonomy.yaml").read_text(encoding="utf-8")
    )


def init_task_set(
    folder: Path, *, name: str | None = None, git: bool = True, commit: bool = True
) -> InitResult:
    """Write a new task set into ``folder`` (created if missing); never overwrites anything."""
    folder = folder.expanduser()
    if folder.exists() and not folder.is_dir():
        raise CtbError(f"{folder}: exists and is not a folder")
    main_branch = _enclosing_branch(folder) if git else None
    files = {
        "ctbench.yaml": config_text(
            name or folder.resolve().name, canary := fresh_canary(), main_branch or "main"
        ),
        "taxonomy.yaml": taxonomy_text(),
        "networks/example-lab.yaml": EXAMPLE_NETWORK,
        ".gitattributes": GITATTRIBUTES,
        ".gitignore": GITIGNORE,
        "reviewers.example.yaml": REVIEWERS_EXAMPLE,
        ".pre-commit-config.yaml": PRE_COMMIT,
    }
    in_the_way = [rel for rel in [*files, "schema", "rca", "path"] if (folder / rel).exists()]
    if in_the_way:
        raise CtbError(
            f"{folder}: already holds {', '.join(in_the_way)}; init writes a new task set and never "
            "overwrites (pick an empty or new folder)"
        )
    result = InitResult(folder=folder, canary=canary)
    for rel, text in files.items():
        atomic_write_text(folder / rel, text)
        result.written.append(folder / rel)
    result.written.extend(export_schemas(folder / "schema"))
    if git:
        result.commit, result.note = _git_init(folder, commit=commit)
    return result


def _enclosing_branch(folder: Path) -> str | None:
    """The branch checked out in the repository ``folder`` sits in, if any: the review's main branch.

    A set made inside an existing repository (``git init`` may still name its first branch
    ``master``) is reviewed against that repository's branch, not a ``main`` it does not have.
    """
    import git as gitpython

    start = folder
    while not start.exists():
        start = start.parent
    try:
        repo = gitpython.Repo(start, search_parent_directories=True)
        return None if repo.head.is_detached else repo.active_branch.name
    except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError, TypeError):
        return None


def _git_init(folder: Path, *, commit: bool) -> tuple[str | None, str]:
    """A repository for the set (unless it is inside one already) and a first commit when git knows who."""
    import git as gitpython

    try:
        repo = gitpython.Repo(folder, search_parent_directories=True)
        note = f"inside the git repository {repo.working_tree_dir}"
    except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError):
        repo = gitpython.Repo.init(folder, initial_branch="main")
        note = "new git repository (branch main)"
    if not commit:
        return None, note
    repo.git.add("-A", "--", str(folder.resolve()))
    try:
        repo.git.commit("-q", "-m", "New task set (ctb-author init)", "--", str(folder.resolve()))
    except gitpython.GitCommandError as exc:
        text = (exc.stderr or str(exc)).strip().splitlines()
        return None, f"{note}; files staged, not committed: {text[-1] if text else exc}"
    return repo.head.commit.hexsha, note
