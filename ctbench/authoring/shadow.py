"""Shadow validation: the working copy checked exactly as ``ctb-author validate`` would check it saved.

The draft is written into a throw-away one-task task set (configuration, taxonomy, the task's
network, the task folder; recordings hard-linked where possible) and the very
:class:`~ctbench.validation.Validator` runs on it, so the app never shows a finding the command
would not. Try it (the replay of the working copy) uses the same shadow.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ctbench.authoring.working_copy import TaskDraft, checked_rel
from ctbench.store import (
    CONFIG_FILE,
    FAMILIES,
    HIDDEN_FILE,
    RECORDINGS_DIR,
    TASK_FILE,
    TAXONOMY_FILE,
    TaskRef,
    TaskSet,
)

if TYPE_CHECKING:
    from ctbench.validation import Finding

# --------------------------------------------------------------------------- validation of a draft


def write_shadow(ts: TaskSet, draft: TaskDraft, dest: Path) -> TaskSet:
    """Lay the draft out as a one-task task set under ``dest/<root name>`` and return it.

    The root folder keeps the real one's name so that findings name the same files
    (``tasks/rca/RCA-007/hidden.yaml``) as ``ctb-author validate`` would.
    """
    root = dest / ts.root.name
    root.mkdir(parents=True, exist_ok=True)
    for name in (CONFIG_FILE, TAXONOMY_FILE):
        if (ts.root / name).is_file():
            shutil.copyfile(ts.root / name, root / name)
    if (ts.root / "dialects").is_dir():
        shutil.copytree(ts.root / "dialects", root / "dialects", dirs_exist_ok=True)
    shadow = TaskSet(root=root)
    (root / "networks").mkdir(exist_ok=True)
    net_name = draft.task.network
    if draft.network is not None:
        real = ts.network_path(draft.network.name)
        if real.is_file():
            shutil.copyfile(real, root / "networks" / real.name)  # merged into, so lines match the real file
        shadow.save_model(shadow.network_path(draft.network.name), draft.network, kind="network")
    elif ts.network_path(net_name).is_file():
        shutil.copyfile(ts.network_path(net_name), shadow.network_path(net_name))
    folder = shadow.task_dir(draft.family, draft.id)
    folder.mkdir(parents=True, exist_ok=True)
    real_folder = ts.task_dir(draft.family, draft.id)
    if not draft.is_new and real_folder.is_dir():
        for name in (TASK_FILE, HIDDEN_FILE):
            if (real_folder / name).is_file():
                shutil.copyfile(real_folder / name, folder / name)
        rec_dir = real_folder / RECORDINGS_DIR
        if rec_dir.is_dir():
            for path in rec_dir.rglob("*"):
                rel = path.relative_to(real_folder).as_posix()
                if path.is_file() and not path.is_symlink() and rel not in draft.removed_files:
                    target = folder / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    try:
                        os.link(path, target)
                    except OSError:
                        shutil.copyfile(path, target)
    for rel, data in draft.pending.items():
        target = folder / checked_rel(rel)
        if target.exists():
            target.unlink()  # may be a hard link to the real file: never write through it
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    shadow.save_model(folder / TASK_FILE, draft.spec(), kind=TASK_FILE)
    shadow.save_model(folder / HIDDEN_FILE, draft.hidden, kind=HIDDEN_FILE)
    return shadow


def validate_draft(ts: TaskSet, draft: TaskDraft) -> list[Finding]:
    """The findings ``ctb-author validate`` would print for this draft if it were saved now."""
    from ctbench.scoring.gold_check import PluginGoldCheck
    from ctbench.validation import Validator

    with tempfile.TemporaryDirectory(prefix="ctb-validate-") as tmp:
        shadow = write_shadow(ts, draft, Path(tmp))
        v = Validator(shadow, gold_check=PluginGoldCheck(shadow))
        v.check_set_files()
        ref = TaskRef(draft.id, draft.family, shadow.task_dir(draft.family, draft.id))
        others = sum(
            (ts.root / fam.value / draft.id).is_dir()
            for fam in FAMILIES
            if not (fam == draft.family and not draft.is_new)
        )
        v.report.tasks_checked = 1
        v.check_task(ref, duplicate=others > 0)
        return list(v.report.findings)
