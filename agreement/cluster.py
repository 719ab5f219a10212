"""The Ray cluster a run uses (:class:`RayCluster`), joined or started here for both of
its users: the scoring executor (:class:`agreement.scoring.executors.RayExecutor`: actors
that load a model once) and independent tasks (:func:`agreement.parallel.run_tasks`:
``agree extract-all``), so that their checks and messages are the same.

Ray's own conventions: an address (``ray_address``, else ``RAY_ADDRESS``) joins that
cluster; without one a local cluster of ``workers x threads`` CPUs starts on this
machine for the run and stops after it. ray is imported only when a cluster starts
(it is an optional extra, and heavy).
"""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys

from agreement.errors import AgreeError
from formats.distribution import install_command
from lm.errors import FieldError, literal

log = logging.getLogger(__name__)

INSTALL_HINT = install_command("cluster")
#: seconds to wait for a cluster's address to answer, and for Ray to start or join one
CONNECT_TIMEOUT_S = 5.0
JOIN_TIMEOUT_S = 30.0


class RayCluster:
    """``workers`` x ``threads`` CPUs of a Ray cluster: the one at ``address`` (None:
    ``RAY_ADDRESS``, else a local cluster started for the run). :meth:`start` joins or
    starts it (once) and checks its CPUs; :meth:`close` stops what it started (a joined
    cluster is only left). ``ray``: the module, once started."""

    def __init__(self, workers: int, threads: int = 1, address: str | None = None):
        self.workers, self.threads, self.address = workers, threads, address
        self.ray = None
        self._started = self._disconnect = False

    def start(self) -> None:
        if self._started:
            return
        self.ray = _import_ray()
        if not self.ray.is_initialized():    # else: the caller's cluster (a library user, the tests)
            address, source = (self.address, "{ray_address}") if self.address else \
                (os.environ.get("RAY_ADDRESS") or None, "RAY_ADDRESS")
            if address:
                _check_reachable(address, source)
                self._init(address=address, source=source)
            else:
                log.info(f"starting a local Ray cluster ({self.workers} workers x {self.threads} CPUs)")
                self._init(num_cpus=self.workers * self.threads)
        self._check_capacity()
        self._started = True

    def _init(self, source: str = "", **kw) -> None:
        where = f"the Ray cluster at {literal(kw['address'])} ({source})" if "address" in kw \
            else "a local Ray cluster"
        if "address" in kw:
            _probe(kw["address"], where)
        # ray.init runs in this (the main) thread: started from another thread, the
        # connection to the cluster's control store dies a minute later (Ray 2.60)
        try:
            with _quiet_fd2("address" in kw):
                # Ray's own log lines would break "one Error: line"; its workers' output too
                self.ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR,
                              configure_logging=True, **kw)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as e:
            raise FieldError(f"cannot start or join {where}: {literal(first_line(e))}") from None
        self._disconnect = True

    def _check_capacity(self) -> None:
        total = self.ray.cluster_resources()
        need = self.workers * self.threads
        if total.get("CPU", 0) < need:
            raise FieldError(f"{{workers}} {self.workers} x {{threads}} {self.threads} need {need} CPUs; "
                             f"the Ray cluster has {int(total.get('CPU', 0))}")

    def close(self) -> None:
        if self._disconnect and self.ray is not None:
            self.ray.shutdown()          # stops the cluster when we started it, else disconnects
            self._disconnect = False
        self._started = False


@contextlib.contextmanager
def _quiet_fd2(active: bool):
    """Standard error (the file descriptor: Ray's C++ core writes there, and its retry
    lines while joining a cluster would break "one Error: line") to nowhere meanwhile."""
    if not active:
        yield
        return
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _import_ray():
    try:
        import ray  # lazy: an optional extra, and a second to import
    except ImportError:
        raise AgreeError(f"the ray executor needs Ray ({INSTALL_HINT})") from None
    return ray


def _check_reachable(address: str, source: str) -> None:
    """Fail within seconds when nothing answers at ``address`` (Ray itself would retry
    for a minute or more). ``auto``/``local`` are Ray's own words, left to it."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise FieldError(f"the Ray address {literal(address)} ({source}) is not HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise FieldError(f"cannot reach the Ray cluster at {literal(address)} ({source}): "
                         f"{literal(reason)}") from None


#: joins the cluster at argv[1] and leaves; prints why not on stdout (one line)
_PROBE = """import logging, sys
import ray
try:
    ray.init(address=sys.argv[1], include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
except Exception as e:
    print((str(e).strip().splitlines() or [type(e).__name__])[0]); sys.exit(1)
ray.shutdown()
"""


def _probe(address: str, where: str) -> None:
    """Join ``address`` once in a child process, bounded in time: something that answers
    there but is not a Ray cluster makes ray.init retry for minutes, and a Ray call cannot
    be bounded from another thread of this process (see RayExecutor._init)."""
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, address], capture_output=True, text=True,
                              timeout=JOIN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise FieldError(f"{where} did not answer as a Ray cluster within {JOIN_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        reason = (done.stdout.strip().splitlines() or ["the probe failed"])[-1]
        raise FieldError(f"cannot start or join {where}: {literal(reason)}")


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
