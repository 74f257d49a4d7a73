"""Joining Ray, for `biocite index build --ray` and `biocite batch --ray` (the one owner of `ray.init`).

`auto` joins the cluster on this machine (`ray start --head`, or RAY_ADDRESS) when there is one, else starts a
local Ray with `local_cpus` CPUs; an address (`ray://head:10001`, `host:6379`) joins that cluster.
"""

from __future__ import annotations

import logging
from typing import Any

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
        try:
            ray.init(address="auto", **options)
        except ConnectionError:
            ray.init(num_cpus=local_cpus, **options)
        return ray
    try:
        ray.init(address=address, **options)
    except (ConnectionError, ValueError) as exc:
        raise BiociteError(f"--ray {address}: cannot join the Ray cluster ({exc})") from None
    return ray
