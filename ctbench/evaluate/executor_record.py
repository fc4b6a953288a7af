"""The executor options a run keeps in run.yaml, without their secrets, and how a resume gets them back.

``ctb-eval run --resume DIR`` must run the rest of a run where it ran before (the Ray address, the
CPUs per attempt, the runtime_env that installs ctbench on the nodes...), so run.yaml keeps the
executor's options. It must never keep a secret: a run folder is shared, committed, attached to
papers. So what is stored is redacted:

- every value of a ``env_vars`` mapping (``runtime_env={"env_vars": {"OPENAI_API_KEY": ...}}``, how
  API keys reach Ray workers) - its name stays;
- every value under a key that names a secret (``token``, ``secret``, ``password``, ``key``,
  ``credential``, ``auth``);
- the password of an address that carries one (``ray://user:PASSWORD@host:10001``).

On resume a redacted ``env_vars`` value is taken from the driver's environment variable of the same
name (as the run's own agent keys are); any other redacted value must be given again
(``--executor-option KEY=...``), and the error names it.

An ``env_vars`` value written ``$NAME`` (or ``${NAME}``) is the driver's variable NAME, read when the
run starts: ``runtime_env='{"env_vars": {"OPENAI_API_KEY": "$OPENAI_API_KEY"}}'`` in single quotes
gives the workers the key without putting it on any command line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ctbench.errors import CtbError

REDACTED = "<redacted>"
_SECRET_KEY = re.compile(r"token|secret|passw|api_?key|(^|_)key$|credential|auth", re.IGNORECASE)
_USERINFO = re.compile(r"^(?P<head>[a-z][a-z0-9+.-]*://[^:/@]+:)(?P<password>[^@]+)(?P<tail>@.*)$", re.I)


def redact(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as run.yaml keeps them: the same shape, every secret replaced by :data:`REDACTED`."""
    return {str(k): _redact(str(k), v, in_env=False) for k, v in options.items()}


def _redact(key: str, value: Any, *, in_env: bool) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _redact(str(k), v, in_env=key == "env_vars") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(key, v, in_env=False) for v in value]
    if in_env or (_SECRET_KEY.search(key) and value is not None and not isinstance(value, bool)):
        return REDACTED
    if isinstance(value, str) and (m := _USERINFO.match(value)):
        return f"{m['head']}{REDACTED}{m['tail']}"
    return value


def restore(
    stored: Mapping[str, Any], given: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The options a resume runs with: those given now over those stored, each redacted ``env_vars``
    value taken from ``environ`` (default: this process's environment). A secret that cannot be
    restored is a :class:`CtbError` naming it and how to give it."""
    environ = os.environ if environ is None else environ
    merged = {**dict(stored), **dict(given)}
    missing: list[str] = []
    out = {k: _restore(k, v, k, environ, missing, stored=k not in given) for k, v in merged.items()}
    if missing:
        raise CtbError(
            "run.yaml keeps the executor options without their secrets, and this resume cannot restore "
            + "; ".join(missing)
            + ". Give them again (--executor-option KEY=VALUE, --ray-address) or set the variables.",
            exit_code=2,
        )
    return out


_VARIABLE = re.compile(r"^\$(\{(?P<braced>\w+)\}|(?P<bare>\w+))$")


def _restore(
    key: str, value: Any, path: str, environ: Mapping[str, str], missing: list[str], *, stored: bool
) -> Any:
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            name = k if (stored and v == REDACTED) else None
            if key == "env_vars" and isinstance(v, str) and (m := _VARIABLE.match(v)):
                name = m["braced"] or m["bare"]
            if key == "env_vars" and name is not None:
                if name in environ:
                    out[k] = environ[name]
                else:
                    missing.append(f"{path}.{k} (set ${name})")
                continue
            out[k] = _restore(k, v, f"{path}.{k}", environ, missing, stored=stored)
        return out
    if isinstance(value, list):
        return [_restore(key, v, path, environ, missing, stored=stored) for v in value]
    if stored and (value == REDACTED or (isinstance(value, str) and REDACTED in value)):
        missing.append(f"{path} (--executor-option {path.split('.')[0]}=...)")
    return value


__all__ = ["REDACTED", "redact", "restore"]
