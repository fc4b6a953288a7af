"""``ctb-author record``: log into devices over SSH (netmiko) and record their output into a task.

Each device of a plan is logged into with netmiko (which turns paging off the vendor's way), each
command is run, and its output becomes a recording of the task through the same code as
``ctb-author add-recording`` (:meth:`EditSession.add_recording`: the key is the command in its
canonical form, the bytes are stored as given).

Byte-exactness: netmiko is asked for the line ends as the terminal delivered them
(``disable_lf_normalization``), and the recorder undoes what the terminal added: the CR a pty puts
before each LF. So an output that held CRLF lines is stored with CRLF, one that held LF with LF,
and the newline netmiko takes away with the prompt is given back. Recording ``ctb-replay ssh``
therefore gives back the task's recordings byte for byte (``tests/test_author_record.py``).

Resumable: every recording is saved (atomically) the moment it is read, and a command whose
canonical form the task already holds for that device is not asked again; a device with nothing
left to ask is not even logged into. So an interrupted run, started again, finishes the rest.
In a git task set, one commit at the end takes everything the run wrote.

Credentials are never written: the password comes from ``$CTBENCH_DEVICE_PASSWORD``, a prompt, or
not at all (SSH keys and the SSH agent); netmiko's session log stays off.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctbench.errors import CtbError, validation_message

if TYPE_CHECKING:
    from ctbench.authoring.editing import EditSession
    from ctbench.store import TaskSet

PASSWORD_ENV = "CTBENCH_DEVICE_PASSWORD"

NETMIKO_TYPES = {
    "arista_eos": "arista_eos",
    "cisco_ios": "cisco_ios",
    "cisco_iosxr": "cisco_xr",
    "cisco_nxos": "cisco_nxos",
    "huawei_vrp": "huawei",
    "huawei_vrp8": "huawei_vrpv8",
    "hp_comware": "hp_comware",
    "juniper_junos": "juniper_junos",
}
"""The netmiko device_type of each CLI family, used when the plan does not name one."""


class RecordError(CtbError):
    """A device could not be recorded: names the device and the step that failed."""


class PlanDevice(BaseModel):
    """One device of a record plan: where to log in and what to run."""

    model_config = ConfigDict(extra="forbid")

    device: str = Field(description="Device name in the task's network.")
    host: str = Field(description="Address or name to connect to.")
    port: int = Field(default=22, ge=1, le=65535)
    device_type: str | None = Field(default=None, description="netmiko device_type (default: from the os).")
    username: str
    commands: list[str] = Field(default_factory=list)
    commands_file: str | None = Field(default=None, description="File with one command per line.")


class RecordPlan(BaseModel):
    """A YAML plan: ``devices:`` with one entry per device (``--plan FILE``)."""

    model_config = ConfigDict(extra="forbid")

    devices: list[PlanDevice] = Field(min_length=1)


class Step(BaseModel):
    """What happened to one command of one device."""

    device: str
    command: str
    canonical: str
    action: str = Field(description="recorded | kept (already in the task)")
    bytes: int = 0
    file: str = ""


class RecordReport(BaseModel):
    task: str
    steps: list[Step] = Field(default_factory=list)
    commit: str | None = None
    note: str = ""

    @property
    def recorded(self) -> int:
        return sum(1 for s in self.steps if s.action == "recorded")


class Connection(Protocol):
    """What the recorder needs of a netmiko connection."""

    def send_command(self, command_string: str, *, read_timeout: float = ...) -> Any: ...

    def disconnect(self) -> None: ...


Connect = Callable[[PlanDevice, str | None], Connection]


def read_commands(path: Path) -> list[str]:
    """Commands of a file, one a line; blank lines and lines starting with '#' are skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CtbError(f"{path}: cannot read the commands: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CtbError(f"{path}: the commands file is not UTF-8 text") from None
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def load_plan(path: Path) -> RecordPlan:
    """The plan in ``path``; commands_file entries are read relative to the plan's folder."""
    from ctbench.yamlio import load_fast

    data = load_fast(Path(path))  # a missing file or a YAML error is a CtbError naming file and line
    try:
        plan = RecordPlan.model_validate(data)
    except ValidationError as exc:
        raise CtbError(f"{path}: {validation_message(exc, 'plan')}") from None
    for dev in plan.devices:
        if dev.commands_file is not None:
            dev.commands += read_commands(Path(path).parent / dev.commands_file)
        if not dev.commands:
            raise CtbError(f"{path}: device {dev.device} has no commands (commands: or commands_file:)")
    return plan


def terminal_bytes(text: str) -> bytes:
    """The recording for netmiko's raw text: the terminal's CR before each LF removed, and the
    newline netmiko took away with the prompt given back."""
    return (text + "\n").replace("\r\n", "\n").encode("utf-8", "surrogateescape")


def netmiko_connect(dev: PlanDevice, password: str | None) -> Connection:
    """A netmiko connection to ``dev`` (paging turned off by netmiko's own session preparation)."""
    try:
        from netmiko import ConnectHandler
    except ImportError as exc:
        raise CtbError(
            f"ctb-author record needs netmiko ({exc}); install it with: pip install 'ctbench[record]'",
            exit_code=2,
        ) from None
    assert dev.device_type is not None
    conn: Connection = ConnectHandler(
        device_type=dev.device_type,
        host=dev.host,
        port=dev.port,
        username=dev.username,
        password=password or "",
        use_keys=password is None,
        allow_agent=password is None,
        disable_lf_normalization=True,
        timeout=30,
    )
    return conn


class Recorder:
    """Records a plan into one task; ``progress(done, total, text)`` is told of every step."""

    def __init__(
        self,
        ts: TaskSet,
        task_id: str,
        *,
        author: str,
        password: str | None,
        connect: Connect = netmiko_connect,
        progress: Callable[[int, int, str], None] | None = None,
        read_timeout: float = 120.0,
    ) -> None:
        from ctbench.authoring.editing import EditSession

        self.ts = ts
        self.task_id = task_id
        self.author = author
        self.password = password
        self.connect = connect
        self.progress = progress or (lambda done, total, text: None)
        self.read_timeout = read_timeout
        self.session: EditSession = EditSession.open(ts, task_id)
        self.report = RecordReport(task=task_id)

    def _plan_device(self, dev: PlanDevice) -> list[tuple[str, str]]:
        """(command, canonical) of each command, checked before anything is logged into."""
        from ctbench.authoring.editing import EditError

        try:
            device = self.session.device(dev.device)
        except (EditError, CtbError) as exc:
            raise RecordError(f"{dev.device}: {exc}") from None
        if device.os is None:
            raise RecordError(f"{dev.device}: has no CLI (no os in the network), nothing to record")
        if dev.device_type is None:
            dev.device_type = NETMIKO_TYPES.get(device.os)
            if dev.device_type is None:
                raise RecordError(
                    f"{dev.device}: give --device-type (netmiko knows no default for {device.os})"
                )
        out = []
        for n, command in enumerate(dev.commands, start=1):
            try:
                canonical, _ = self.session.canonical(dev.device, command)
            except (EditError, ValueError) as exc:
                raise RecordError(f"{dev.device}: command {n} {command!r}: {exc}") from None
            out.append((command, canonical))
        return out

    def _rejected(self, dev: PlanDevice, command: str, data: bytes) -> str | None:
        """The device's error line when ``data`` is its refusal of ``command``, else None.

        The dialect may not know a command the device has (it is then recorded as typed, like
        add-recording does); but when the dialect finds it invalid and the device printed that
        vendor's error for it, the output is a refusal, never evidence.
        """
        device = self.session.device(dev.device)
        dialect = self.session.vendors.dialect(device.os) if device.os else None
        if dialect is None:
            return None
        res = dialect.resolve(command)
        if res.error is None:
            return None
        message = dialect.render_error(res.error, command, "").strip("\n").splitlines()[-1].strip()
        text = data.decode("utf-8", "replace")
        return message if message and message in text else None

    def run(self, devices: list[PlanDevice]) -> RecordReport:
        planned = [(dev, self._plan_device(dev)) for dev in devices]  # every error before any login
        total = sum(len(cmds) for _, cmds in planned)
        done = 0
        for dev, cmds in planned:
            have = {r.command for r in self.session.draft.task.recordings if r.device == dev.device}
            todo = [(c, k) for c, k in cmds if k not in have]
            for command, canonical in cmds:
                if canonical in have:
                    done += 1
                    self.report.steps.append(
                        Step(device=dev.device, command=command, canonical=canonical, action="kept")
                    )
                    self.progress(done, total, f"{dev.device}: {canonical} (already recorded)")
            if not todo:
                continue
            self.progress(done, total, f"{dev.device}: logging into {dev.host}:{dev.port}")
            try:
                conn = self.connect(dev, self.password)
            except CtbError:
                raise
            except Exception as exc:
                raise RecordError(
                    f"{dev.device}: login to {dev.username}@{dev.host}:{dev.port} failed: "
                    f"{type(exc).__name__}: {_first_line(exc)}"
                ) from None
            try:
                for command, canonical in todo:
                    try:
                        text = conn.send_command(command, read_timeout=self.read_timeout)
                    except Exception as exc:
                        raise RecordError(
                            f"{dev.device}: running {command!r} failed: {type(exc).__name__}: {_first_line(exc)}"
                        ) from None
                    data = terminal_bytes(str(text))
                    refused = self._rejected(dev, command, data)
                    if refused is not None:
                        raise RecordError(f"{dev.device}: {command!r}: the device refused it: {refused}")
                    rec, _ = self.session.add_recording(dev.device, command, data)
                    self.session.save(commit=False, author=self.author, action="add-recording")
                    done += 1
                    self.report.steps.append(
                        Step(
                            device=dev.device,
                            command=command,
                            canonical=canonical,
                            action="recorded",
                            bytes=len(data),
                            file=rec.file,
                        )
                    )
                    self.progress(done, total, f"{dev.device}: {canonical} ({len(data)} bytes)")
            finally:
                conn.disconnect()
        return self.report

    def commit(self) -> None:
        """One commit for everything the run wrote (a task set under git; else a note why not)."""
        n = self.report.recorded
        result = self.session.save(
            commit=True,
            author=self.author,
            action="add-recording",
            message=f"{self.task_id}: record {n} command output(s) over SSH" if n else None,
        )
        self.report.commit = result.commit
        self.report.note = result.note


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


__all__ = [
    "NETMIKO_TYPES",
    "PASSWORD_ENV",
    "PlanDevice",
    "RecordError",
    "RecordPlan",
    "RecordReport",
    "Recorder",
    "load_plan",
    "netmiko_connect",
    "read_commands",
    "terminal_bytes",
]
