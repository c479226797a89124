"""Who may use the app (issue 26, item 3): private by default, a password beyond the machine.

The app serves on the loopback address (``127.0.0.1``: ``make run`` and ``.streamlit/config.toml``), so only this
machine can reach it and no login is asked. Serving beyond the machine is an explicit setting (Streamlit's
``server.address``, e.g. ``make run ADDRESS=0.0.0.0``), and then every page asks for the password first; so it does
with settings ``require_login`` (behind a reverse proxy on the same machine). Streamlit's own login (``st.login``)
needs an OpenID provider on the network, which an offline app cannot count on, hence a password of our own:

* set with ``python -m rag access set-password`` on the server, kept as a salted scrypt hash (n=2^14, r=8, p=1:
  about 50 ms a try) in ``<data folder>/access.json`` (mode 0600), never in the clear;
* compared in constant time; the app waits a second after a wrong one and refuses attempts for a minute after
  :data:`MAX_FAILURES` in a row (:class:`Throttle`);
* no password set while a login is required: the app serves nothing but that message (it fails closed).

Pure functions, no Streamlit (the gate is :mod:`ui.access`).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import threading
import time
from pathlib import Path

#: The file holding the password hash, in the data folder (``settings.store``).
ACCESS_FILE = "access.json"
#: Wrong passwords in a row after which attempts are refused for :data:`LOCKOUT_S` seconds.
MAX_FAILURES = 5
LOCKOUT_S = 60.0
_SCRYPT = {"n": 2 ** 14, "r": 8, "p": 1}


def is_loopback(address: str | None) -> bool:
    """Whether Streamlit's ``server.address`` keeps the app on this machine (``127.0.0.0/8``, ``::1``,
    ``localhost``). Unset or empty means every interface (Streamlit's default), so ``False``."""
    if not address:
        return False
    a = address.strip().strip("[]").lower()
    if a == "localhost":
        return True
    try:
        return ipaddress.ip_address(a).is_loopback
    except ValueError:
        return False


def login_required(address: str | None, require_login: bool = False) -> bool:
    """A login is asked when the app is served beyond this machine, or settings ``require_login`` says so."""
    return require_login or not is_loopback(address)


def _hash(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, dklen=32, maxmem=64 * 1024 * 1024, **_SCRYPT)


def set_password(root: Path, password: str) -> Path:
    """Store the salted scrypt hash of ``password`` in ``<root>/access.json`` (mode 0600). Raises ``ValueError``
    for a password under 8 characters."""
    if len(password) < 8:
        raise ValueError("a password needs at least 8 characters")
    salt = secrets.token_bytes(16)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    path = root / ACCESS_FILE
    tmp = path.with_name(f".{ACCESS_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"scheme": "scrypt", **_SCRYPT, "salt": salt.hex(), "hash": _hash(password, salt).hex()}, fh)
    os.replace(tmp, path)
    return path


def password_set(root: Path) -> bool:
    """Whether a password is set for the data folder ``root``."""
    return (Path(root) / ACCESS_FILE).is_file()


def clear_password(root: Path) -> bool:
    """Remove the password (the app then serves only on this machine). Returns whether one was set."""
    path = Path(root) / ACCESS_FILE
    existed = path.is_file()
    path.unlink(missing_ok=True)
    return existed


def verify(root: Path, password: str) -> bool:
    """Whether ``password`` is the one set for ``root`` (constant-time compare); ``False`` when none is set."""
    try:
        rec = json.loads((Path(root) / ACCESS_FILE).read_text())
        expected = bytes.fromhex(rec["hash"])
        got = hashlib.scrypt(password.encode("utf-8"), salt=bytes.fromhex(rec["salt"]), dklen=len(expected),
                             n=int(rec["n"]), r=int(rec["r"]), p=int(rec["p"]), maxmem=64 * 1024 * 1024)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return hmac.compare_digest(got, expected)


class Throttle:
    """Wrong passwords of one server process: after :data:`MAX_FAILURES` in a row, attempts are refused for
    :data:`LOCKOUT_S` seconds (a guessing script gets five tries a minute). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.failures = 0
        self.locked_until = 0.0

    def wait_s(self, now: float | None = None) -> float:
        """Seconds until attempts are accepted again (0 when they are)."""
        with self._lock:
            return max(0.0, self.locked_until - (now if now is not None else time.monotonic()))

    def record(self, ok: bool, now: float | None = None) -> None:
        """Count one attempt."""
        with self._lock:
            if ok:
                self.failures = 0
                return
            self.failures += 1
            if self.failures >= MAX_FAILURES:
                self.failures = 0
                self.locked_until = (now if now is not None else time.monotonic()) + LOCKOUT_S
