"""Importing Ray for a cluster address on this machine's loopback (issue 29, item 7).

Ray (2.60, in ``ray._private.ray_constants``) decides once, when it is first imported, whether it may
form multi-node clusters: ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``, on by default on Linux. While it is
on, ``ray.init`` replaces a loopback host in the cluster address (``127.0.0.1``, ``localhost``,
``::1``) by this machine's outward address (``services.resolve_ip_for_localhost``: the source address
of a route to the outside, e.g. eth0's 192.0.2.2). A head started with ``--node-ip-address
127.0.0.1`` under the switch off listens on 127.0.0.1 alone, so the driver dials 192.0.2.2:PORT,
where nothing listens, and Ray retries for minutes. With the switch off the address is used as
given, and a driver so started still joins a head that advertises the outward address (its GCS
listens on every interface): tried with both kinds of head, 2026-12-02.

So :func:`import_ray` turns the switch off for the one ``import ray`` of a driver given a loopback
address, and puts the environment back at once: Ray has read the variable by then and nothing else
reads it, so nothing beyond Ray's own constant keeps the setting, and the processes a driver starts
later (agents, a shell) see the environment they would have seen. A user's own value is left alone.
When Ray was imported before (a notebook, a caller that imported it) or the user turned the switch
on, :func:`check_rewrite` says in one line what Ray will dial and why, instead of a minutes-long hang.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

from ctbench.evaluate.executors import ExecutorError

SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""The hosts Ray rewrites (``ray._common.network_utils.is_localhost``); 127.0.0.2 and the like it keeps."""


def address_host(address: str | None) -> str | None:
    """The host of a ``HOST:PORT`` cluster address (``[::1]:PORT`` too); None for none, ``local``,
    ``auto`` and ``ray://`` client addresses (a client server resolves its own side)."""
    if not address or address in ("local", "auto") or "://" in address:
        return None
    host, sep, _ = address.rpartition(":")
    return host.strip("[]") if sep else None


def is_loopback(address: str | None) -> bool:
    """True when ``address`` names this machine by a loopback host Ray would rewrite."""
    return address_host(address) in LOOPBACK_HOSTS


def import_ray(address: str | None) -> ModuleType:
    """``import ray`` for a driver of the cluster at ``address`` (see the module docstring).

    Raises ImportError when Ray is not installed, like the import itself.
    """
    if "ray" in sys.modules or SWITCH in os.environ or not is_loopback(address):
        import ray

        return ray
    os.environ[SWITCH] = "0"
    try:
        import ray
    finally:
        os.environ.pop(SWITCH, None)
    return ray


def check_rewrite(address: str, timeout_s: float) -> None:
    """One clear line when Ray will dial another address than ``address`` and nothing listens there.

    Ray's rewrite (module docstring) is harmless against a head that listens on every interface; it
    hangs the driver of a head that listens on the loopback alone.
    """
    import socket

    if not is_loopback(address):
        return
    try:
        from ray._private import services

        dialled = services.canonicalize_bootstrap_address(address)
    except Exception:  # a private API of Ray's: without it, ray.init reports what it meets
        return
    if not dialled or dialled == address:
        return
    host, _, port = dialled.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=min(5.0, timeout_s)):
            return
    except (OSError, ValueError):
        raise ExecutorError(
            f"executor 'ray': Ray turns --ray-address {address} into {dialled} ({SWITCH} is on "
            "in this process), where nothing listens: the head listens on the loopback alone. "
            f"Unset {SWITCH} (or set it to 0) before Ray is first imported, or start the head "
            "on this machine's address (ray start --head without --node-ip-address 127.0.0.1)"
        ) from None
