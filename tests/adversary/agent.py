#!/usr/bin/env python3
"""An agent that cheats: it hunts for the answer key instead of troubleshooting.

Run by ``ctb-eval run --agent command --agent-cmd 'python3 tests/adversary/agent.py'``. It does what
a coding agent with a shell could do, channel by channel, and prints one line
``ADVERSARY-REPORT {json}`` with everything it found (the sandbox tests read it from the log):

- ``fs``: walks the file system from ``/`` for hidden.yaml, task.yaml, run folders, trajectories,
  the canary and answer-key text; walks up from its workspace;
- ``proc``: every ``/proc/<pid>``'s cwd, root, fds, environ and cmdline;
- ``env``: its own environment (paths it names are followed);
- ``git``: every ``.git`` folder it can find, loose objects decompressed and searched;
- ``http``: the replay API without a token, with guessed and other sessions' ids, opening its own
  sessions, listing, closing;
- ``traversal``: path traversal in device and command names through its own session;
- ``proxy``: the MCP proxy's own files - the ctbench package folder, its install records
  (``direct_url.json`` names the checkout of an editable install) and everything around them;
- ``writes``: files it tries to create outside its workspace - in every folder it came across
  that lies under a root the caller allows (``--mark-tree DIR``: that folder and all below it;
  ``--mark-dir DIR``: that folder alone). Without either it writes nothing: an adversary run
  unsandboxed on a developer's machine must not litter other people's files (an early version
  wrote into every ``/proc/<pid>/cwd`` it saw, which put marks into other git worktrees).

Every channel hunts on its own (its own time budget, ``ADVERSARY_BUDGET_S`` seconds, and its own
record of the folders it searched), so what one channel reports never depends on which channel
ran first or how long another took; the ``/proc`` channel looks at its own ancestors (the runner)
before any other process.

It submits any gold answer it found (else a made-up one) through the replay API, so a leak shows in
the score too. Standard library only; it must run under any Python 3.8+.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import time
import urllib.error
import urllib.request
import zlib

CANARY = "6f1d2c8e-4b7a-4e0f-9a51-3c2d7e8b9f04"
KEY_MARKERS = ("golden_actions", CANARY, "\nanswer:\n", "rationale:")
INTERESTING_NAMES = (
    "hidden.yaml",
    "task.yaml",
    "run.yaml",
    "results.jsonl",
    "ctbench.yaml",
    "scores.json",
    "direct_url.json",
    "RECORD",
)
SKIP_TOP = ("/proc", "/sys", "/dev")
TIME_BUDGET_S = float(os.environ.get("ADVERSARY_BUDGET_S", "10"))
"""Seconds each channel may spend."""
EXHAUSTIVE = os.environ.get("ADVERSARY_EXHAUSTIVE") == "1"
"""Keep hunting after the gold is found (to show every open channel, not just the first)."""
T0 = time.monotonic()
MARK = "ADVERSARY_WAS_HERE"


def read(path: str, limit: int = 200_000) -> str | None:
    """A regular file's text (a FIFO or socket would block: skipped)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def is_key(text: str | None) -> bool:
    return bool(text) and any(m in text for m in KEY_MARKERS)


# ----------------------------------------------------------------------------- what a key file gives


def extract(text: str) -> dict[str, list[str]]:
    """Answer lines, golden actions and metadata out of a hidden.yaml-like text (no YAML library)."""
    got: dict[str, list[str]] = {"answers": [], "golden_actions": [], "metadata": []}
    for m in re.finditer(r"-\s*node:\s*(\S+)\s*\n\s*object:\s*(.+?)\s*\n\s*label:\s*(.+?)\s*\n", text):
        got["answers"].append(f"{m.group(1)};{m.group(2).strip(chr(34))};{m.group(3).strip(chr(34))}")
    paths = []
    for block in re.findall(r"-\s*hops:\s*\n((?:\s*-\s*\{.*\}\s*\n)+)", text):
        hops = re.findall(r"node:\s*([^,}\s]+)(?:,\s*egress:\s*([^}\s]+))?", block)
        paths.append(" -> ".join(f"{n}_{e}" if e else n for n, e in hops))
    got["answers"] += paths
    for m in re.finditer(r"-\s*device:\s*(\S+)\s*\n\s*command:\s*(.+?)\s*\n", text):
        got["golden_actions"].append(f"{m.group(1)}: {m.group(2)}")
    for key in ("observability", "chain_length", "protocol_mechanisms", "heterogeneity", "rationale"):
        for m in re.finditer(rf"^\s*{key}:\s*(.+)$", text, re.M):
            got["metadata"].append(f"{key}: {m.group(1)[:200]}")
    return got


def hunt_dir(f: Findings, channel: str, start: str, depth: int = 5) -> None:
    """Look for key files under ``start`` and in the folders around it (what a path leads to)."""
    hunted = f.hunted.setdefault(channel, set())
    for base in dict.fromkeys((start, os.path.dirname(start), os.path.dirname(os.path.dirname(start)))):
        if not base or base == "/" or base in hunted or not os.path.isdir(base):
            continue
        hunted.add(base)
        f.places.add(base)
        for up in (base, os.path.dirname(base), os.path.dirname(os.path.dirname(base))):
            if os.path.isdir(os.path.join(up, ".git")):
                git_dirs.append(os.path.join(up, ".git"))
        root_depth = base.rstrip("/").count("/")
        for dirpath, dirnames, filenames in os.walk(base, onerror=lambda e: None):
            if f.out_of_time() or dirpath.count("/") - root_depth >= depth:
                dirnames[:] = []
                continue
            if ".git" in dirnames:
                git_dirs.append(os.path.join(dirpath, ".git"))
            dirnames[:] = [
                d for d in dirnames if d not in ("__pycache__", "node_modules", "site-packages", ".git")
            ]
            for name in filenames:
                if name in ("hidden.yaml", "run.yaml"):
                    path = os.path.join(dirpath, name)
                    f.look(channel, path)
                    if name == "run.yaml":
                        for m in re.findall(r"(/[^\s'\"]+)", read(path) or ""):
                            if os.path.isdir(m):
                                hunt_dir(f, channel, m)


class Findings:
    def __init__(self) -> None:
        self.channels: dict[str, dict] = {}
        self.task_id = os.environ.get("CTBENCH_TASK_ID", "")
        self.hunted: dict[str, set[str]] = {}
        """Per channel, the folders it searched (a channel never skips one because another did)."""
        self.places: set[str] = set()
        """Every folder some channel came across (where the writes channel tries to leave marks)."""
        self.deadline = time.monotonic() + TIME_BUDGET_S

    def start(self) -> None:
        """A new channel begins: its own time budget."""
        self.deadline = time.monotonic() + TIME_BUDGET_S

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    def channel(self, name: str) -> dict:
        return self.channels.setdefault(name, {"seen": [], "leaks": [], "extracted": {}})

    def seen(self, name: str, item: str) -> None:
        ch = self.channel(name)
        if len(ch["seen"]) < 400:
            ch["seen"].append(item[:300])

    def leak(self, name: str, where: str, text: str) -> None:
        ch = self.channel(name)
        ch["leaks"].append({"where": where[:300], "text": text[:4000]})
        if where.startswith("/"):
            self.places.add(os.path.dirname(where))
        for kind, values in extract(text).items():
            ch["extracted"].setdefault(kind, [])
            for v in values:
                if v not in ch["extracted"][kind]:
                    ch["extracted"][kind].append(v)

    def look(self, name: str, path: str) -> None:
        text = read(path)
        if text is None:
            return
        self.seen(name, path)
        if is_key(text):
            self.leak(name, path, text)

    def best_answer(self) -> str | None:
        """The gold of this task, if some leak names it (a key file of this very task first)."""
        for ch in self.channels.values():
            for leak in ch["leaks"]:
                if self.task_id and (
                    f"id: {self.task_id}" in leak["text"] or f"/{self.task_id}/" in leak["where"]
                ):
                    answers = extract(leak["text"])["answers"]
                    if answers:
                        return "\n".join(answers)
        return None


# ----------------------------------------------------------------------------- channels


def fs_channel(f: Findings) -> None:
    ws = os.getcwd()
    # walk up from the workspace: the runner's scratch folder, the run folder, the checkout
    p = ws
    while True:
        parent = os.path.dirname(p)
        try:
            f.seen("fs", f"ls {parent}: {sorted(os.listdir(parent))[:50]}")
        except OSError:
            pass
        if parent == p:
            break
        hunt_dir(f, "fs", parent, depth=4)  # the neighbourhood first: nearest folders, then further up
        p = parent
    first = ("work", "home", "root", "tmp", "srv", "opt", "mnt", "var")
    for top in sorted(
        os.listdir("/"), key=lambda t: (t not in first, first.index(t) if t in first else 0, t)
    ):
        root = "/" + top
        if root in SKIP_TOP:
            continue
        for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: None):
            if f.out_of_time() or (f.best_answer() and not EXHAUSTIVE):
                f.seen("fs", "time budget spent" if f.out_of_time() else "found the gold: stopped looking")
                return
            dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "node_modules")]
            if ".git" in dirnames:
                git_dirs.append(os.path.join(dirpath, ".git"))
            if "recordings" in dirnames or "hidden.yaml" in filenames:
                f.seen("fs", f"task folder {dirpath}")
            for name in filenames:
                if (
                    name in INTERESTING_NAMES
                    or name.endswith(".jsonl")
                    or (name.endswith((".yaml", ".yml", ".txt", ".md", ".json")) and "tasks" in dirpath)
                ):
                    f.look("fs", os.path.join(dirpath, name))


git_dirs: list[str] = []


def git_channel(f: Findings) -> None:
    found = list(dict.fromkeys(git_dirs))
    f.seen("git", f"{len(found)} .git folder(s) found: {sorted(found)[:10]}")
    # the repositories holding a key file found elsewhere first, then nearest to the workspace
    keyed = [leak["where"] for ch in f.channels.values() for leak in ch["leaks"]]
    ws = os.getcwd()

    def order(git: str) -> tuple[bool, int, str]:
        repo = os.path.dirname(git)
        holds_key = any(w.startswith(repo + "/") for w in keyed)
        common = os.path.commonpath([repo, ws]) if repo.startswith("/") else "/"
        return (not holds_key, -common.count("/"), git)

    for git in sorted(found, key=order)[:20]:
        if f.out_of_time() or (f.best_answer() and not EXHAUSTIVE):
            return
        f.seen("git", git)
        objects = os.path.join(git, "objects")
        for dirpath, _, filenames in os.walk(objects):
            if f.out_of_time():
                return
            for name in filenames:
                path = os.path.join(dirpath, name)
                try:
                    with open(path, "rb") as fh:
                        raw = fh.read(2_000_000)
                    text = (
                        zlib.decompress(raw).decode("utf-8", "replace")
                        if "pack" not in dirpath
                        else raw.decode("utf-8", "replace")
                    )
                except (OSError, zlib.error):
                    continue
                if is_key(text):
                    f.leak("git", path, text)


def ancestors() -> list[str]:
    """The pids of this process's parent, its parent, ... (the runner among them), nearest first."""
    out: list[str] = []
    pid = str(os.getpid())
    while True:
        status = read(f"/proc/{pid}/status") or ""
        m = re.search(r"^PPid:\s*(\d+)", status, re.M)
        if not m or m.group(1) in ("0", pid) or m.group(1) in out:
            return out
        pid = m.group(1)
        out.append(pid)


def proc_channel(f: Findings) -> None:
    me = str(os.getpid())
    first = ancestors()
    f.seen("proc", f"ancestors {first}")
    rest = sorted((p for p in os.listdir("/proc") if p.isdigit() and p not in first), key=int)
    for pid in first + rest:
        if pid == me or f.out_of_time():
            continue
        base = f"/proc/{pid}"
        cmd = read(f"{base}/cmdline")
        if cmd is not None:
            f.seen("proc", f"{pid} cmdline {cmd.replace(chr(0), ' ')[:200]}")
        for link in ("cwd", "root", "exe"):
            try:
                target = os.readlink(f"{base}/{link}")
            except OSError:
                continue
            f.seen("proc", f"{pid} {link} -> {target}")
            if link == "cwd":
                f.places.add(target)
                hunt_dir(f, "proc", target)
                for name in ("hidden.yaml", "run.yaml"):
                    f.look("proc", f"{base}/cwd/{name}")
                try:
                    for entry in os.listdir(f"{base}/cwd")[:100]:
                        f.look("proc", f"{base}/cwd/{entry}")
                        for sub in ("hidden.yaml", "task.yaml"):
                            f.look("proc", f"{base}/cwd/{entry}/{sub}")
                except OSError:
                    pass
        env = read(f"{base}/environ")
        if env:
            f.seen("proc", f"{pid} environ {env.replace(chr(0), ' ')[:300]}")
            for var in env.split("\0"):
                k, _, v = var.partition("=")
                if v.startswith("/") and os.path.isdir(v):
                    hunt_dir(f, "proc", v)
        try:
            fds = os.listdir(f"{base}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"{base}/fd/{fd}")
            except OSError:
                continue
            f.seen("proc", f"{pid} fd {fd} -> {target}")
            f.look("proc", f"{base}/fd/{fd}")
            if target.startswith("/"):
                d = os.path.dirname(target)
                hunt_dir(f, "proc", d)
                for name in ("run.yaml", "hidden.yaml"):
                    f.look("proc", os.path.join(d, name))
                    f.look("proc", os.path.join(os.path.dirname(d), name))


def env_channel(f: Findings) -> None:
    for k, v in sorted(os.environ.items()):
        f.seen("env", f"{k}={v}")
        for part in re.split(r"[:\s]", v):
            if part.startswith("/") and os.path.isdir(part):
                hunt_dir(f, "env", part)


def http(method: str, url: str, body: dict | None = None, token: str | None = None) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read(100_000).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(10_000).decode("utf-8", "replace")
    except OSError as exc:
        return -1, str(exc)


def session_ids_seen(f: Findings) -> list[str]:
    text = json.dumps(f.channels)
    return sorted(set(re.findall(r"CTBENCH_REPLAY_SESSION=([A-Za-z0-9_-]{8,})", text)))


def http_channel(f: Findings) -> dict:
    url = os.environ.get("CTBENCH_REPLAY_URL", "")
    sid = os.environ.get("CTBENCH_REPLAY_SESSION", "")
    token = os.environ.get("CTBENCH_REPLAY_TOKEN", "")
    ch = f.channel("http")
    res: dict = {}
    if not url.startswith("http"):
        return res
    res["health"] = http("GET", f"{url}/health")
    res["list"] = http("GET", f"{url}/sessions")[0]
    res["own_without_token"] = http("GET", f"{url}/sessions/{sid}")[0]
    res["own_with_token"] = http("GET", f"{url}/sessions/{sid}", token=token)[0]
    res["guessed"] = [
        http("GET", f"{url}/sessions/{g}", token=token)[0]
        for g in ("1", "admin", "0" * 16, sid[:-1] + ("A" if sid[-1:] != "A" else "B"))
    ]
    opened = []
    for task in ("RCA-001", "RCA-002", "PATH-001", f.task_id):
        code, text = http("POST", f"{url}/sessions", {"task_id": task})
        opened.append(code)
        if code == 201:
            other = json.loads(text)["session_id"]
            s_code, s_text = http("GET", f"{url}/sessions/{other}")
            ch["seen"].append(f"opened {task}: {s_text[:300]}")
    res["open"] = opened
    others = [o for o in session_ids_seen(f) if o != sid]
    res["other_sessions"] = []
    for other in others[:10]:
        code, text = http("GET", f"{url}/sessions/{other}/trajectory")
        res["other_sessions"].append(code)
        if code == 200:
            f.leak("http", f"trajectory of {other}", text)
    for path in ("/sessions/../hidden.yaml", "/../../etc/passwd", "/mcp/", f"/mcp/{sid}/"):
        res.setdefault("paths", []).append(http("GET", url + path)[0])
    res["delete_own"] = http("DELETE", f"{url}/sessions/{sid}", token=token)[0]
    for value in res.values():
        if isinstance(value, tuple) and is_key(value[1]):
            f.leak("http", "response", value[1])
    ch["result"] = res
    return res


def traversal_channel(f: Findings) -> None:
    url = os.environ.get("CTBENCH_REPLAY_URL", "")
    sid = os.environ.get("CTBENCH_REPLAY_SESSION", "")
    token = os.environ.get("CTBENCH_REPLAY_TOKEN", "")
    if not url.startswith("http"):
        return
    code, text = http("GET", f"{url}/sessions/{sid}/devices", token=token)
    devices = [d["name"] for d in json.loads(text)["devices"]] if code == 200 else []
    dev = devices[0] if devices else "R1"
    probes = [
        ("../hidden.yaml", "display version"),
        ("../../hidden.yaml", "show version"),
        ("/etc/passwd", "show version"),
        (dev, "../hidden.yaml"),
        (dev, "../../hidden.yaml"),
        (dev, "display ../hidden.yaml"),
        (dev, "show file ../../hidden.yaml"),
        (dev, "more flash:/../../hidden.yaml"),
        (dev, "display current-configuration | include golden"),
        (dev + "/../" + dev, "display version"),
        (dev, "recordings/../../hidden.yaml"),
    ]
    for device, command in probes:
        code, text = http("POST", f"{url}/sessions/{sid}/run", {"device": device, "command": command}, token)
        f.seen("traversal", f"{device!r} {command!r} -> {code}")
        if is_key(text):
            f.leak("traversal", f"{device} {command}", text)


def proxy_channel(f: Findings) -> None:
    """The MCP proxy's own files: its package, its venv, the checkout an editable install names."""
    import subprocess

    try:
        where = subprocess.run(
            [sys.executable, "-c", "import ctbench, sys; print(ctbench.__file__); print(sys.prefix)"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        where = []
    f.seen("proxy", f"ctbench at {where}")
    candidates = []
    if where:
        pkg = os.path.dirname(where[0])
        candidates += [os.path.dirname(pkg), os.path.dirname(os.path.dirname(pkg))]
        for dirpath, _, filenames in os.walk(pkg):
            for name in filenames:
                if name.endswith((".yaml", ".json", ".jsonl", ".md")):
                    f.look("proxy", os.path.join(dirpath, name))
    if len(where) > 1:
        # where an install records its source: site-packages/*.pth and */direct_url.json (a walk of the
        # whole venv - Ray alone is thousands of files - spent the time budget on a loaded machine)
        import glob

        site = os.path.join(where[1], "lib", "python*", "site-packages")
        for path in sorted(
            glob.glob(os.path.join(site, "*.pth")) + glob.glob(os.path.join(site, "*", "direct_url.json"))
        ):
            text = read(path) or ""
            f.seen("proxy", f"{os.path.basename(path)}: {text[:300]}")
            for m in re.findall(r"file://(/[^\"]+)|^(/\S+)$", text, re.M):
                candidates.append(m[0] or m[1])
    for c in candidates:
        for rel in ("tasks", "."):
            base = os.path.join(c, rel)
            try:
                f.seen("proxy", f"ls {base}: {sorted(os.listdir(base))[:40]}")
            except OSError:
                continue
            for dirpath, _, filenames in os.walk(base):
                if f.out_of_time():
                    return
                for name in filenames:
                    if name == "hidden.yaml":
                        f.look("proxy", os.path.join(dirpath, name))


def writes_channel(f: Findings, trees: list[str], dirs: list[str]) -> list[str]:
    """Try to leave a mark outside the workspace: the temp folders, the attempt folder around the
    workspace, the folders its environment names, and every folder another channel came across (a
    process's cwd, the folder of a key file, the run folder) - each one only if it lies under a
    ``trees`` root or is one of ``dirs``. Lists where it stuck (as the agent sees it).

    The roots are the caller's promise to the machine, not a limit of what the agent could do: run
    unsandboxed, the same agent writes wherever its user may.
    """
    ws = os.path.realpath(os.getcwd())
    targets = [
        "/tmp",
        "/var/tmp",
        os.path.dirname(ws),
        os.path.dirname(os.path.dirname(ws)),
        os.environ.get("HOME", ""),
        os.environ.get("TMPDIR", ""),
        os.environ.get("PWD", ""),
    ]
    for key in ("CTBENCH_ANSWER_FILE", "CTBENCH_PROMPT_FILE", "CTBENCH_USAGE_FILE"):
        v = os.environ.get(key)
        if v:
            targets += [os.path.dirname(v), os.path.dirname(os.path.dirname(v))]
    targets += sorted(f.places)
    trees = [os.path.realpath(t) for t in trees]
    dirs = [os.path.realpath(d) for d in dirs]

    def allowed(t: str) -> bool:
        return t in dirs or any(t == r or t.startswith(r.rstrip("/") + "/") for r in trees)

    stuck, tried = [], []
    for t in dict.fromkeys(targets):
        if not t.startswith("/") or not os.path.isdir(t):
            continue
        real = os.path.realpath(t)
        if real == ws or real.startswith(ws + "/") or not allowed(real):
            continue
        tried.append(real)
        path = os.path.join(real, f"{MARK}.{os.getpid()}.txt")
        try:
            with open(path, "x") as fh:
                fh.write("x")
            stuck.append(path)
        except OSError:
            pass
    f.channel("writes")["tried"] = tried
    f.channel("writes")["stuck"] = stuck
    return stuck


def submit(answer: str) -> int:
    url = os.environ.get("CTBENCH_REPLAY_URL", "")
    sid = os.environ.get("CTBENCH_REPLAY_SESSION", "")
    token = os.environ.get("CTBENCH_REPLAY_TOKEN", "")
    return http("POST", f"{url}/sessions/{sid}/submit", {"answer": answer}, token)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="an agent that hunts for the answer key")
    parser.add_argument(
        "--mark-tree",
        action="append",
        default=[],
        metavar="DIR",
        help="the writes channel may leave marks in DIR and anywhere below it",
    )
    parser.add_argument(
        "--mark-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="the writes channel may leave a mark in DIR itself",
    )
    opts = parser.parse_args(argv)
    sys.stdin.read()
    f = Findings()
    for name, fn in (
        ("env", env_channel),
        ("proc", proc_channel),
        ("traversal", traversal_channel),
        ("proxy", proxy_channel),
        ("fs", fs_channel),
        ("git", git_channel),
    ):
        f.start()
        t = time.monotonic()
        try:
            fn(f)
        except Exception as exc:  # keep going: one channel failing is not the end of the hunt
            f.seen(name, f"error {type(exc).__name__}: {exc}")
        f.channel(name)["elapsed_s"] = round(time.monotonic() - t, 2)
    answer = f.best_answer()
    code = submit(answer if answer else "NOBODY;nothing;no idea")
    # last: the API probes close or poison the session, and the writes need the paths seen above
    f.start()
    try:
        http_channel(f)
    except Exception as exc:
        f.seen("http", f"error {type(exc).__name__}: {exc}")
    writes_channel(f, opts.mark_tree, opts.mark_dir)
    report = {
        "task": f.task_id,
        "found_gold": answer is not None,
        "submit_status": code,
        "elapsed_s": round(time.monotonic() - T0, 2),
        "channels": _report_channels(f.channels),
    }
    print("ADVERSARY-REPORT " + json.dumps(report), flush=True)
    return 0


REPORT_LEAKS = 100
"""Leaks per channel in the printed report: the runner keeps an agent's output line whole only up to
4 MiB (issue 25), and an exhaustive hunt finds more than that; the first ones are what tests read."""


def _report_channels(channels: dict) -> dict:
    """The channels as the report line carries them: each leak list cut to its first REPORT_LEAKS."""
    out = {}
    for name, ch in channels.items():
        leaks = [{"where": x["where"], "text": x["text"][:2000]} for x in ch["leaks"][:REPORT_LEAKS]]
        out[name] = {**ch, "leaks": leaks, "leaks_total": len(ch["leaks"])}
    return out


if __name__ == "__main__":
    sys.exit(main())
