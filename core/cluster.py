"""Joining Ray, for `biocite index build --ray` and `biocite batch --ray` (the one owner of `ray.init`).

`auto` joins the cluster RAY_ADDRESS names when it is set, else starts a private local Ray with `local_cpus` CPUs
that ends with this run; an address (`ray://head:10001`, `host:6379`) joins that cluster. Never whatever Ray
happens to run on the machine: Ray's own "auto" joined another biocite run's private Ray, which stops when that
run ends and takes this run's workers with it. A cluster from `ray start --head` is joined by its address
(with RAY_AUTH_MODE=token where it uses token authentication, Ray's default for local clusters since 2.59).
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Any
from urllib.parse import urlsplit

from biocite.errors import BiociteError


def connect_ray(address: str, local_cpus: int) -> Any:
    """The `ray` module, initialised (once per process) on `address`; a one-line error if Ray is missing or
    the cluster cannot be joined."""
    try:
        import ray
    except ImportError:
        raise BiociteError("--ray needs Ray: pip install 'biocite[scale]'") from None
    if ray.is_initialized():
        return ray
    # Ray's own start-up lines would break biocite's one-line errors and -q; its errors still show
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
    }
    if address == "auto":
        if not os.environ.get("RAY_ADDRESS"):
            ray.init(address="local", num_cpus=local_cpus, **options)
            return ray
        address = os.environ["RAY_ADDRESS"]
    _check_reachable(address)
    try:
        ray.init(address=address, **options)
    except (ConnectionError, ValueError) as exc:
        raise BiociteError(
            f"--ray {address}: cannot join the Ray cluster ({exc}); one with token authentication (Ray's default"
            " for local clusters since 2.59) is joined with RAY_AUTH_MODE=token"
        ) from None
    return ray


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """A one-line error when nothing listens at a `host:port` / `ray://host:port` address: Ray itself retries
    such an address for minutes, printing its own log lines."""
    try:
        parts = urlsplit(address if "://" in address else f"//{address}")
        host, port = parts.hostname, parts.port
    except ValueError:
        return  # not host:port; Ray judges it
    if not host or not port:
        return
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise BiociteError(
            f"--ray {address}: cannot join the Ray cluster: nothing answers there ({exc})"
        ) from None
