"""Sealed gold: a task's hidden part encrypted with age, so blindness does not rest on honour.

A task repository may keep ``hidden.yaml`` as ``hidden.yaml.age`` (the age format, readable by the
``age`` CLI: ``age -d -i key.txt hidden.yaml.age``) encrypted to the task's authors and the
maintainers, whose public keys are listed in the reviewers file. A reviewer's clone then holds only
ciphertext; after the reviewer's blind answer is on the remote, ``ctb-review unseal ID --for NAME``
re-encrypts the file with the reviewer added, and only then can the reviewer's reveal decrypt it.

Beside the ciphertext, ``hidden.recipients.yaml`` lists who can decrypt (name, role, public key,
and for a reviewer the blind commit their unseal came after). age files do not name their
recipients, but their header has one stanza per recipient, so the audit checks that every version
of the ciphertext has exactly as many recipients as its list, and that no reviewer is listed before
their blind commit: a recipient added by hand, listed or not, is caught.

Sealing also lets a benchmark be published in a public repository without putting its answers into
training corpora.

The user's identity is an age identity file (``age-keygen -o key.txt``) named by ``--identity`` or
the ``CTBENCH_AGE_IDENTITY`` environment variable; nothing else is ever read for a key.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from ctbench.errors import CtbError, validation_message
from ctbench.model import Strict
from ctbench.yamlio import dump_document, load_fast, to_commented

IDENTITY_ENV = "CTBENCH_AGE_IDENTITY"
RECIPIENTS_FILE = "hidden.recipients.yaml"
AGE_HEADER = b"age-encryption.org/v1\n"

Role = Literal["author", "maintainer", "reviewer"]


class SealError(CtbError):
    """A sealed hidden part that cannot be opened or written (no identity, not a recipient, no key)."""


def _pyrage() -> Any:
    try:
        import pyrage
    except ImportError:
        raise SealError(
            "this task's gold is sealed with age, and opening it needs the pyrage package: "
            "pip install 'ctbench[seal]'"
        ) from None
    return pyrage


def is_sealed_bytes(data: bytes) -> bool:
    return data.startswith(AGE_HEADER)


def stanza_count(data: bytes) -> int:
    """X25519 recipients of an age file, read from its header (one ``-> X25519`` stanza each); no key needed.

    age writers add random "grease" stanzas of other types, which no identity opens; only X25519
    stanzas (the recipients ctbench seals to) are counted.
    """
    head, sep, _ = data.partition(b"\n--- ")
    if not sep or not data.startswith(AGE_HEADER):
        return 0
    return sum(1 for line in head.split(b"\n") if line.startswith(b"-> X25519 "))


# --------------------------------------------------------------------------- identities


def identity_path(explicit: Path | str | None = None) -> Path | None:
    """The identity file to use: the one given, else ``$CTBENCH_AGE_IDENTITY``, else none."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(IDENTITY_ENV)
    return Path(env).expanduser() if env else None


def load_identities(path: Path | None) -> list[Any]:
    """The X25519 identities in an age identity file (``AGE-SECRET-KEY-1...`` lines; comments skipped)."""
    if path is None:
        raise SealError(
            f"the gold is sealed: name your age identity file with --identity FILE or ${IDENTITY_ENV}"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SealError(f"{path}: cannot read the age identity: {exc.strerror or exc}") from None
    x25519 = _pyrage().x25519
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            out.append(x25519.Identity.from_str(line))
        except Exception:
            raise SealError(f"{path} line {n}: not an age identity (expected AGE-SECRET-KEY-1...)") from None
    if not out:
        raise SealError(f"{path}: no age identity in the file (expected an AGE-SECRET-KEY-1... line)")
    return out


def make_identity(path: Path) -> str:
    """Write a new age identity to ``path`` (mode 0600, never over an existing file); its public key.

    Written to a temporary file beside it and linked into place, so an interrupted run leaves no
    half-written key and an existing identity is never replaced.
    """
    ident = _pyrage().x25519.Identity.generate()
    public = str(ident.to_public())
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"# created by ctb-review init-keys\n# public key: {public}\n{ident}\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise SealError(f"{path} exists: an age identity is never overwritten") from None
    finally:
        tmp.unlink(missing_ok=True)
    return public


def public_key(path: Path) -> str:
    """The public key (``age1...``) of the first identity in ``path``."""
    return str(load_identities(path)[0].to_public())


# --------------------------------------------------------------------------- sealing


def seal(plaintext: bytes, keys: Iterable[str], *, armoured: bool = False) -> bytes:
    """``plaintext`` encrypted to every public key (age format, one stanza per distinct key).

    ``armoured``: the ASCII armour of the age format (PEM-like), for ciphertext kept inside a text
    file such as a review record.
    """
    pyrage = _pyrage()
    recipients = []
    for key in dict.fromkeys(k.strip() for k in keys if k and k.strip()):
        try:
            recipients.append(pyrage.x25519.Recipient.from_str(key))
        except Exception:
            raise SealError(f"{key[:16]}...: not an age public key (expected age1...)") from None
    if not recipients:
        raise SealError(
            "nobody to seal the gold to: list age public keys (age: age1...) for the task's authors "
            "and the maintainers in the reviewers file"
        )
    return bytes(pyrage.encrypt(plaintext, recipients, armoured))


def unseal(data: bytes, identity: Path | None, where: str) -> bytes:
    """The plaintext of a sealed file, or :class:`SealError` naming the file and what to do."""
    identities = load_identities(identity)
    pyrage = _pyrage()
    try:
        return bytes(pyrage.decrypt(data, identities))
    except pyrage.DecryptError:
        raise SealError(
            f"{where}: sealed, and {identity} is not one of its recipients (the author or a "
            "maintainer adds a reviewer after the blind answer: ctb-review unseal ID --for NAME)"
        ) from None


# --------------------------------------------------------------------------- the hash key


HASH_KEY_FIELD = "hash_key"


def new_hash_key() -> str:
    """A fresh secret for a task's hidden-part hashes: 32 random bytes, as hex."""
    import secrets

    return secrets.token_hex(32)


def with_hash_key(plain: bytes, where: str) -> bytes:
    """``hidden.yaml`` bytes with a ``hash_key`` added when they have none (comments and layout kept).

    Sealed gold keys its part hashes (:mod:`ctbench.approval.hashes`) with this secret, which lives
    only inside the ciphertext: without it a review record's hash of a short answer (a device, an
    interface) could be matched by hashing guesses. An existing key is never replaced, so hashes
    taken before stay comparable.
    """
    from ctbench.yamlio import load_document

    try:
        doc = load_document(Path(where), plain.decode("utf-8"))
    except (UnicodeDecodeError, CtbError):
        return plain  # not YAML: the validator reports it; nothing to key
    if not isinstance(doc, dict) or doc.get(HASH_KEY_FIELD):
        return plain
    doc[HASH_KEY_FIELD] = new_hash_key()
    return dump_document(doc).encode("utf-8")


# --------------------------------------------------------------------------- the recipients list


class Recipient(Strict):
    name: str
    role: Role
    key: str = Field(description="age public key (age1...).")
    after_blind: str | None = Field(
        default=None, description="Reviewer only: the blind commit this unseal came after."
    )


class Recipients(Strict):
    """``hidden.recipients.yaml``: who can decrypt ``hidden.yaml.age`` beside it."""

    recipients: list[Recipient] = Field(default_factory=list)

    def keys(self) -> list[str]:
        return [r.key for r in self.recipients]

    def names(self) -> list[str]:
        return [r.name for r in self.recipients]

    def with_recipient(self, r: Recipient) -> Recipients:
        return Recipients(recipients=[*(x for x in self.recipients if x.name != r.name), r])


def parse_recipients(text: str, where: str) -> Recipients:
    try:
        return Recipients.model_validate(load_fast(Path(where), text) or {})
    except ValidationError as exc:
        raise CtbError(f"{where}: {validation_message(exc, '')}") from None


def render_recipients(r: Recipients) -> str:
    header = (
        "# Who can decrypt hidden.yaml.age beside this file; written by ctbench (ctb-review seal/unseal).\n"
        "# The audit checks it against the ciphertext's recipient count and the blind commits.\n"
    )
    return header + dump_document(to_commented(r.model_dump(mode="json", exclude_none=True)))


def people_keys(reviewers_file: Path) -> tuple[dict[str, str], list[str]]:
    """(person id -> age public key, maintainer ids) from the reviewers file (:mod:`ctbench.people`)."""
    from ctbench.people import load_people

    people = load_people(reviewers_file)
    return people.age_keys(), list(people.maintainers)


def initial_recipients(reviewers_file: Path, authors: Sequence[str]) -> Recipients:
    """A new seal: the task's authors and the maintainers, with their keys from the reviewers file."""
    from ctbench.people import load_people

    people = load_people(reviewers_file)
    keys, maintainers = people.age_keys(), list(people.maintainers)
    out: list[Recipient] = []
    missing = []
    for name, role in [
        *((a, "author") for a in people.author_ids(authors)),
        *((m, "maintainer") for m in maintainers),
    ]:
        if name in (r.name for r in out):
            continue
        if name not in keys:
            missing.append(name)
            continue
        out.append(Recipient(name=name, role=role, key=keys[name]))
    if missing:
        raise SealError(
            f"no age public key for {', '.join(missing)} in {reviewers_file} (add `age: age1...` to "
            "their entries under `people:`)"
        )
    return Recipients(recipients=out)
