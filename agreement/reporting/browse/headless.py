"""Drive Debian's ``chromium`` headless over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: commands on the child's fd 3, answers on its fd 4, each
a JSON message ended by a NUL byte), with nothing but the standard library: no
websocket client, no Selenium or Playwright. The tests, the benchmark and the docs'
screenshot all open the page this way.

:class:`Chromium` starts the browser with a fresh profile and no network services,
opens one page and records every request the page makes
(``Network.requestWillBeSent``), so a caller can check that a page read nothing but
its own files.
"""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from agreement.errors import AgreeError

#: flags that work in a container with no display, no GPU and no network
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars")
#: the executables tried, in order
NAMES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    """The path of a Chromium executable, or None (tests skip with a reason)."""
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Chromium:
    """One headless Chromium with one page; a context manager (the browser and its
    profile are removed on exit). ``width``/``height``: the window."""

    def __init__(self, executable: str | None = None, *, width: int = 1400, height: int = 900,
                 timeout: float = 60.0):
        self.executable = executable or find_chromium()
        if self.executable is None:
            raise AgreeError("no chromium here (apt-get install chromium)")
        self.timeout = timeout
        self.size = (width, height)
        self.requests: list[str] = []
        self._next = 0
        self._buffer = b""
        self._session: str | None = None

    def __enter__(self) -> "Chromium":
        self._profile = tempfile.mkdtemp(prefix="agree-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        args = [self.executable, *FLAGS, f"--user-data-dir={self._profile}", "--remote-debugging-pipe",
                f"--window-size={self.size[0]},{self.size[1]}", "about:blank"]

        def fds():   # the protocol's fixed descriptors in the child: 3 reads, 4 writes
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        # pass_fds keeps 3 and 4 open: the child closes the others after preexec_fn ran
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, pass_fds=(3, 4), preexec_fn=fds)
        os.close(to_child_r)
        os.close(from_child_w)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", {"width": self.size[0], "height": self.size[1],
                                                         "deviceScaleFactor": 1, "mobile": False})
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._send({"id": self._id(), "method": "Browser.close"})
            self._proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()
        finally:
            for fd in (self._to_child, self._from_child):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self._profile, ignore_errors=True)

    # ------------------------------------------------------------ protocol
    def _id(self) -> int:
        self._next += 1
        return self._next

    def _send(self, message: dict) -> None:
        os.write(self._to_child, json.dumps(message).encode() + b"\0")

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            # wait for data at most until the deadline: a busy page sends nothing for minutes
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise AgreeError("chromium closed its DevTools pipe (it exited)")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method: str, params: dict | None = None, *, timeout: float | None = None) -> dict:
        """Send one command (to the page once attached) and return its result; the events
        that arrive meanwhile are recorded (requests)."""
        mid = self._id()
        message = {"id": mid, "method": method, "params": params or {}}
        if self._session is not None and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self._session
        self._send(message)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == mid:
                if "error" in reply:
                    raise AgreeError(f"chromium: {method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if reply.get("method") == "Network.requestWillBeSent":
                self.requests.append(reply["params"]["request"]["url"])

    # ------------------------------------------------------------ page
    def open(self, path: str | os.PathLike, query: str = "") -> None:
        """Navigate to a local file (``file://``); returns once it started loading."""
        url = Path(path).resolve().as_uri() + query
        self.call("Page.navigate", {"url": url})

    def evaluate(self, expression: str, *, timeout: float | None = None) -> Any:
        """The value of a JS expression in the page (awaiting a promise)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = (details.get("exception") or {}).get("description") or details.get("text")
            raise AgreeError(f"chromium: {expression[:60]}: {text}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float | None = None, poll: float = 0.02) -> Any:
        """Poll until a JS expression is truthy; returns its value."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            value = self.evaluate(f"(() => {{ try {{ return {expression}; }} catch (e) {{ return null; }} }})()",
                                  timeout=max(0.1, deadline - time.monotonic()))   # a busy page: the same deadline
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never satisfied {expression}")
            time.sleep(poll)

    def screenshot(self, path: str | os.PathLike) -> Path:
        """A PNG of the window as it is now."""
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path

    def outside_requests(self) -> list[str]:
        """The page's requests for anything but local files (and inline data)."""
        return [u for u in self.requests if not u.startswith(("file://", "data:", "about:"))]
