"""Who is who: one id per person, and the one function that maps a git identity to it.

Every tool that asks "who is acting?" or "is this person an author of that task?" asks it here, so a
check cannot fail open because one tool knows alice as ``alice`` and another as
``alice <alice@example.net>``. The people are listed in the task set's ``reviewers.yaml``::

    people:
      - id: alice
        names: [Alice Liddell, alice]          # the git user.name values that are hers
        emails: [alice@example.net]            # the git user.email values that are hers
        age: age1...                           # her age recipient, for sealed gold
        ssh: ssh-ed25519 AAAA... alice@laptop  # her SSH signing public key (signed review steps)
    reviewers:
      - {name: alice, vendors: [Huawei], domains: [rca]}
    maintainers: [maria]

The role sections (``reviewers``, ``maintainers``, ``authors``) name people by id. A role entry whose
id has no ``people`` entry is a person too (known by that name, with the ``age`` key the entry gives),
so reviewers files written before identities existed keep working.

The acting person is never taken on someone's word: :func:`git_identity` reads the identity git
itself would commit with (``git var GIT_AUTHOR_IDENT``: environment, then configuration), and
:meth:`People.resolve` maps it to an id. A claimed name (``--as``, ``$CTBENCH_USER``) may only
confirm it (:func:`acting_person`).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field, ValidationError, field_validator

from ctbench.errors import CtbError, validation_message
from ctbench.model import Strict
from ctbench.yamlio import load_fast

PEOPLE_FILE = "reviewers.yaml"
ROLE_SECTIONS = ("reviewers", "maintainers", "authors")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_IDENT_RE = re.compile(r"^\s*(.*?)\s*<([^<>]*)>\s*$")


class IdentityError(CtbError):
    """The acting git identity is not a listed person, or a claimed name is not the acting person."""


class Person(Strict):
    """One person of the task set, under one id, with everything that identifies them."""

    id: str = Field(
        min_length=1, description="The one name every tool records (authors, reviewers, trailers)."
    )
    names: list[str] = Field(default_factory=list, description="git user.name values that are this person's.")
    emails: list[str] = Field(
        default_factory=list, description="git user.email values that are this person's."
    )
    age: str | None = Field(default=None, description="age recipient (age1...), for sealed gold.")
    ssh: str | None = Field(
        default=None,
        description="SSH signing public key (ssh-ed25519 AAAA...), which every review step of theirs is signed with.",
    )

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ID_RE.match(value):
            raise ValueError(
                f"id {value!r}: letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        return value

    @field_validator("names", "emails")
    @classmethod
    def _strip(cls, values: list[str]) -> list[str]:
        return [v.strip() for v in values if v.strip()]

    @field_validator("ssh")
    @classmethod
    def _ssh_key(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = value.split()
        if len(parts) < 2 or not parts[0].startswith(("ssh-", "ecdsa-", "sk-")):
            raise ValueError("ssh: expected a public key line such as `ssh-ed25519 AAAA... comment`")
        return f"{parts[0]} {parts[1]}"


def split_identity(text: str) -> tuple[str, str]:
    """``Name <email>`` -> (name, email); a bare name -> (name, "")."""
    m = _IDENT_RE.match(text)
    if m:
        return m.group(1), m.group(2).strip()
    return text.strip(), ""


@dataclass
class People:
    """Everybody in the reviewers file, by id, and their roles."""

    persons: dict[str, Person] = field(default_factory=dict)
    reviewers: list[str] = field(default_factory=list)
    maintainers: list[str] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)
    source: str = PEOPLE_FILE
    explicit: bool = False
    """Whether the file has a ``people:`` section (identities listed); else ids are only role names."""

    def resolve(self, name: str, email: str = "") -> str | None:
        """The id of the person a git identity (name, email) belongs to, or None.

        An email listed for exactly one person decides; else a name that is one person's id or one of
        their listed names. Ambiguous matches resolve to nobody (a refusal says why).
        """
        mail = email.strip().lower()
        if mail:
            hits = [p.id for p in self.persons.values() if mail in (e.lower() for e in p.emails)]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                return None
        nm = name.strip()
        if not nm:
            return None
        hits = [p.id for p in self.persons.values() if nm == p.id or nm in p.names]
        if len(hits) == 1:
            person = self.persons[hits[0]]
            if mail and person.emails:
                return None  # a listed name with an email that is not theirs: somebody else's clone
            return hits[0]
        return None

    def author_id(self, author: str) -> str:
        """An author as recorded in a task file (an id, or legacy ``Name <email>``) -> the person's id.

        Unknown authors are returned as written, so a check against them fails closed for everybody
        listed.
        """
        if author in self.persons:
            return author
        name, email = split_identity(author)
        return self.resolve(name, email) or author

    def author_ids(self, authors: Iterable[str]) -> list[str]:
        return list(dict.fromkeys(self.author_id(a) for a in authors))

    def age_key(self, pid: str) -> str | None:
        p = self.persons.get(pid)
        return p.age if p else None

    def ssh_key(self, pid: str) -> str | None:
        p = self.persons.get(pid)
        return p.ssh if p else None

    def age_keys(self) -> dict[str, str]:
        return {pid: p.age for pid, p in self.persons.items() if p.age}

    @property
    def signing(self) -> bool:
        """Whether review steps are signed here: some person lists an SSH signing key."""
        return any(p.ssh for p in self.persons.values())

    @property
    def all_have_age(self) -> bool:
        return bool(self.persons) and all(p.age for p in self.persons.values())

    def allowed_signers(self) -> str:
        """git's ``gpg.ssh.allowedSignersFile`` text: one line per person with a key, principal = id."""
        return "".join(f"{pid} {p.ssh}\n" for pid, p in sorted(self.persons.items()) if p.ssh)

    def how_to_add(self, name: str, email: str) -> str:
        """The line a refusal ends with: what to add to the reviewers file for this identity."""
        guess = re.sub(r"[^A-Za-z0-9._-]+", "", (email.split("@")[0] if email else name)) or "ID"
        return (
            f"add it to your entry under `people:` in {self.source}, e.g. "
            f"`- {{id: {guess}, names: [{name or 'NAME'}], emails: [{email or 'EMAIL'}]}}` "
            "(names and emails are lists: one person may commit from several identities)"
        )


def parse_people(data: object, where: str) -> People:
    """People from the reviewers file's data (read loosely here; ``ctb-review`` validates the rest)."""
    out = People(source=where)
    if not isinstance(data, dict):
        return out
    raw = data.get("people")
    if raw is not None:
        out.explicit = True
        if not isinstance(raw, list):
            raise CtbError(f"{where}: people: expected a list of {{id, names, emails, age, ssh}}")
        for n, entry in enumerate(raw, 1):
            try:
                person = Person.model_validate(entry)
            except ValidationError as exc:
                raise CtbError(f"{where}: people entry {n}: {validation_message(exc, '')}") from None
            if person.id in out.persons:
                raise CtbError(f"{where}: person {person.id!r} is listed twice under people")
            out.persons[person.id] = person
    for section in ROLE_SECTIONS:
        entries = data.get(section) or []
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if isinstance(entry, str):
                entry = {"name": entry}
            if not isinstance(entry, dict) or not entry.get("name"):
                continue
            pid = str(entry["name"])
            getattr(out, section).append(pid)
            known = out.persons.get(pid)
            age = str(entry["age"]) if entry.get("age") else None
            if known is None:
                try:
                    out.persons[pid] = Person(id=pid, age=age)
                except ValidationError as exc:
                    raise CtbError(f"{where}: {section}: {validation_message(exc, '')}") from None
            elif age and not known.age:
                out.persons[pid] = known.model_copy(update={"age": age})
    seen: dict[str, str] = {}
    for p in out.persons.values():
        for e in p.emails:
            other = seen.setdefault(e.lower(), p.id)
            if other != p.id:
                raise CtbError(f"{where}: email {e} is listed for both {other} and {p.id}")
    return out


def load_people(path: Path, text: str | None = None) -> People:
    """The people of a reviewers file (an absent file: nobody, and nothing to enforce)."""
    if text is None and not path.is_file():
        return People(source=str(path))
    return parse_people(load_fast(path, text) or {}, str(path))


def people_of(root: Path) -> People:
    """The people of the task set at ``root`` (its ``reviewers.yaml``)."""
    return load_people(root / PEOPLE_FILE)


def git_identity(cwd: Path) -> tuple[str, str] | None:
    """(name, email) git would commit with in ``cwd`` (environment first, then config), or None."""
    try:
        proc = subprocess.run(
            ["git", "var", "GIT_AUTHOR_IDENT"], cwd=cwd, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    # "Name <email> 1700000000 +0000"
    m = re.match(r"^(.*?)\s*<([^<>]*)>\s+\d+\s+[-+]\d{4}\s*$", proc.stdout.strip())
    if not m:
        return None
    return m.group(1).strip(), m.group(2).strip()


def acting_person(people: People, cwd: Path, claimed: str | None = None) -> str:
    """The id of the person acting in ``cwd``: their git identity, mapped. The one answer for every tool.

    ``claimed`` (``--as``, ``$CTBENCH_USER``, ``$CTBENCH_AUTHOR``) may only name that same person.
    With nobody listed (no reviewers file) there is nothing to map against: the claimed name, else
    git's user.name, is used as it is.
    """
    ident = git_identity(cwd)
    if not people.persons:
        if claimed:
            return claimed.strip()
        if ident and ident[0]:
            return ident[0]
        raise IdentityError("who are you? set git config user.name (or pass --as NAME)")
    if ident is None:
        raise IdentityError(
            f"no git identity here ({cwd}): git config user.name NAME and git config user.email EMAIL, "
            f"as listed for you in {people.source}"
        )
    name, email = ident
    pid = people.resolve(name, email)
    if pid is None:
        raise IdentityError(
            f"your git identity {name} <{email}> is not a person in {people.source}: "
            + people.how_to_add(name, email)
        )
    if claimed and claimed.strip() != pid:
        other = people.author_id(claimed.strip())
        if other != pid:
            raise IdentityError(
                f"you are {pid} (git identity {name} <{email}>), not {claimed.strip()}: a name given "
                "with --as, --author, $CTBENCH_USER or $CTBENCH_AUTHOR may only name yourself; each "
                "person acts from their own clone"
            )
    return pid


def ssh_public_of(signing_key: str) -> str | None:
    """``type base64`` of a git ``user.signingkey`` value (a key file, its ``.pub``, or ``key::...``), or None.

    None when it cannot be told without asking for a passphrase; the audit still checks the signature.
    """
    value = signing_key.strip()
    if value.startswith("key::"):
        parts = value[5:].split()
        return f"{parts[0]} {parts[1]}" if len(parts) >= 2 else None
    path = Path(value).expanduser()
    for pub in (path, Path(str(path) + ".pub")):
        try:
            text = pub.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        parts = text.split()
        if len(parts) >= 2 and parts[0].startswith(("ssh-", "ecdsa-", "sk-")):
            return f"{parts[0]} {parts[1]}"
    try:
        proc = subprocess.run(
            ["ssh-keygen", "-y", "-f", str(path)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    parts = proc.stdout.split()
    return f"{parts[0]} {parts[1]}" if proc.returncode == 0 and len(parts) >= 2 else None
