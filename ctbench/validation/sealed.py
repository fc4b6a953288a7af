"""Validating a sealed hidden part: decrypted in memory with the user's identity, never written out.

Kept beside the validator so its one change is a branch: a sealed task's gold is checked exactly
like a plain one, and a user who cannot open it hears why instead of a YAML error about binary
bytes. The recipients list must match the ciphertext's recipient count (see :mod:`ctbench.sealing`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from ctbench.errors import CtbError
from ctbench.model import HiddenSpec
from ctbench.sealing import RECIPIENTS_FILE, SealError, parse_recipients, stanza_count
from ctbench.store import SEALED_HIDDEN_FILE, TaskRef, TaskSet
from ctbench.yamlio import YamlFileError, load_fast, read_text

Report = Callable[..., None]
"""The validator's ``error(code, message, **kw)`` for the sealed file."""


def load_sealed(
    ts: TaskSet, ref: TaskRef, error: Report, warn: Report
) -> tuple[Any, str | None, ValidationError | None]:
    """(HiddenSpec or None, plain text or None, schema errors for the validator to report).

    A user who is not a recipient (a reviewer before the unseal) gets a warning, not an error: the
    visible part is still checked, and a reviewer's clone (or its pre-commit hook) is not broken
    by gold it is meant not to read. The run gate skips such a task anyway (its approval cannot be
    checked), and ``ctb-review submit`` validates with the author's identity.
    """
    sealed = ref.path / SEALED_HIDDEN_FILE
    rec_file = ref.path / RECIPIENTS_FILE
    try:
        recipients = parse_recipients(read_text(rec_file), str(rec_file))
    except CtbError as exc:
        error(
            "sealed",
            f"{RECIPIENTS_FILE} is missing or broken beside the sealed gold: {exc}",
            expected="the recipients list ctb-review seal writes",
        )
        recipients = None
    if recipients is not None:
        count = stanza_count(sealed.read_bytes())
        if count != len(recipients.recipients):
            error(
                "sealed",
                f"the sealed gold has {count} recipient(s) but {RECIPIENTS_FILE} lists "
                f"{len(recipients.recipients)}: a recipient was added or dropped by hand",
                expected="re-seal through ctb-review seal / unseal",
            )
    try:
        text = ts.hidden_text(ref)
    except SealError as exc:
        warn(
            "sealed",
            f"the gold is not checked: {exc}",
            expected="your age identity among the recipients (--identity FILE or $CTBENCH_AGE_IDENTITY)",
        )
        return None, None, None
    try:
        data = load_fast(sealed, text)
    except YamlFileError as exc:
        error("yaml", f"(sealed) {exc.detail}", line=exc.line)
        return None, None, None
    if not isinstance(data, dict):
        error("schema", "the sealed gold is not a mapping", expected="a mapping (hidden task part)")
        return None, text, None
    try:
        return HiddenSpec.model_validate(data), text, None
    except ValidationError as exc:
        return None, text, exc
