"""Socket plumbing shared by the mesh and the relay.

Used by :mod:`mpc.wire.transport` and :mod:`mpc.wire.relay`: the greeting
a connection opens with, and what is checked before a connection is
accepted (:func:`accept_greeting`); non-blocking I/O on plain and TLS
sockets (:data:`WOULD_BLOCK`, :func:`pending`); selector registration; and
what TCP carried on a connection, from the kernel (:func:`tcp_info_bytes`).
"""

from __future__ import annotations

import contextlib
import errno
import re
import selectors
import socket
import ssl
import struct
import time
from collections import deque
from collections.abc import Container
from typing import TYPE_CHECKING, cast

from mpc.wire import frames as fr

if TYPE_CHECKING:
    from mpc.wire.tls import Wrapper

#: the greeting: magic, version, kind HELLO, session, sender rank, receiver rank
HELLO = struct.Struct("<2sBBQII")
#: "not now" on a non-blocking socket, plain or TLS
WOULD_BLOCK = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


def accept_greeting(sock: socket.socket, deadline: float, session: int, me: int,
                    wrap: Wrapper | None, waiting: Container[int], refused: list[str],
                    addr: tuple | None) -> tuple[int, socket.socket] | tuple[None, None]:
    """(rank, socket) of a new connection whose TLS handshake, greeting and certificate are
    right: it must be for this run (``session``), to ``me``, from a rank in ``waiting``, with a
    certificate naming that rank's participant. Otherwise (None, None); the reason is added to
    ``refused``. Nothing else is read from the connection."""
    where = f"{addr[0]}:{addr[1]}" if addr else "a connection"
    try:
        tune(sock)
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        if wrap is not None:
            sock = wrap(sock, True, None)
        data = recv_exact(sock, HELLO.size)
        magic, version, kind, sess, sender, receiver = HELLO.unpack(data)
        if (magic, version, kind) != (fr.MAGIC, fr.VERSION, fr.HELLO):
            raise ConnectionError("its greeting is not ours")
        if sess != session or receiver != me:
            raise ConnectionError("its greeting is for another run or another participant")
        if sender not in waiting:
            raise ConnectionError(f"it claims rank {sender}, which is not expected here")
        if wrap is not None:
            wrap.verify(cast(ssl.SSLSocket, sock), sender)
        return sender, sock
    except (OSError, ConnectionError, ssl.SSLError) as e:
        refused.append(f"{where}: {reason(e)}")
        with contextlib.suppress(OSError):
            sock.close()
        return None, None


def reason(e: BaseException) -> str:
    """Why a connection failed, in words: never the TLS library's raw text (``(_ssl.c:2427)``,
    ``EOF occurred in violation of protocol``) nor an ``[Errno N]`` prefix."""
    if isinstance(e, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
        return "connection closed"
    if isinstance(e, ConnectionResetError):
        return "connection reset"
    if isinstance(e, BrokenPipeError):
        return "connection closed"
    text = str(getattr(e, "reason", None) or getattr(e, "strerror", None) or str(e)
               or type(e).__name__)
    if isinstance(e, ssl.SSLCertVerificationError):
        text = f"certificate not from this deployment's CA ({e.verify_message})"
    elif "ALERT_UNKNOWN_CA" in text or "ALERT_BAD_CERTIFICATE" in text:
        text = "the peer does not accept this participant's certificate (another CA?)"
    return _SSL_NOISE.sub("", text).strip() or type(e).__name__


def why(e: BaseException) -> str:
    """`` (reason)`` for a disconnection message, or nothing when the reason is only that the
    connection closed (``"host-2 disconnected at step 4"``)."""
    text = reason(e)
    return "" if text == "connection closed" else f" ({text})"


#: the TLS library's source locations and errno prefixes, left out of messages
_SSL_NOISE = re.compile(r"\s*\(_ssl\.c:\d+\)|^\[Errno \d+\]\s*|^\[SSL[^\]]*\]\s*")


def refusals(refused: list[str]) -> str:
    return ("; refused meanwhile: " + "; ".join(refused[-4:])) if refused else ""


def pending(sock: socket.socket) -> bool:
    return isinstance(sock, ssl.SSLSocket) and sock.pending() > 0


def select_socket(sel: selectors.BaseSelector, sock: socket.socket, ev: int,
                  data: object) -> None:
    try:
        key = sel.get_key(sock)
    except (KeyError, ValueError):
        key = None
    if ev == 0:
        if key is not None:
            sel.unregister(sock)
    elif key is None:
        sel.register(sock, ev, data)
    elif key.events != ev:
        sel.modify(sock, ev, data)


_TCP_INFO = getattr(socket, "TCP_INFO", 11)


def tcp_info_bytes(sock: socket.socket) -> tuple[int, int]:
    """(bytes sent, bytes received) of one TCP connection from the kernel (Linux ``TCP_INFO``:
    ``tcpi_bytes_sent - tcpi_bytes_retrans + tcpi_notsent_bytes`` where the kernel has them
    (5.5+): written by this process, retransmissions counted once; else
    ``tcpi_bytes_acked``; and ``tcpi_bytes_received``); (0, 0) where that is not available."""
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, 232)
    except (OSError, ValueError):
        return 0, 0
    if len(raw) >= 216:             # + what the application wrote that TCP has not sent yet
        sent = struct.unpack_from("<Q", raw, 200)[0] - struct.unpack_from("<Q", raw, 208)[0] \
            + struct.unpack_from("<I", raw, 144)[0]
    elif len(raw) >= 136:
        sent = struct.unpack_from("<Q", raw, 120)[0]
    else:
        return 0, 0
    return int(sent), int(struct.unpack_from("<Q", raw, 128)[0])


def listen_socket(host: str, port: int, who: str) -> socket.socket:
    """A TCP socket bound to host:port (not yet listening); OSError naming the address and
    ``who`` listens there when it cannot bind (a busy port, an address not of this host)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    lst = socket.socket(family, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        lst.bind((host, port))
    except OSError as e:
        lst.close()
        hint = {errno.EADDRINUSE: "another process holds the port",
                errno.EADDRNOTAVAIL: "the address is not one of this machine's",
                errno.EACCES: "ports below 1024 need privileges"}.get(e.errno or 0, reason(e))
        raise OSError(f"{who} cannot listen on {host}:{port}: {hint} (give it another address "
                      "in deploy.toml, or stop what holds it)") from None
    return lst


def dial(host: str, port: int, deadline: float) -> socket.socket | None:
    """A TCP connection to host:port, retried until ``deadline`` (None once it has passed)."""
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=5)
            tune(sock)
            return sock
        except OSError:
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)


def send_queue(sock: socket.socket, queue: deque[memoryview], chunk: int) -> bool:
    """Send from the front of ``queue`` (a deque of memoryviews) what the non-blocking socket
    takes; True once the queue is empty. OSError (the peer left) propagates."""
    while queue:
        mv = queue[0]
        try:
            n = sock.send(mv[:chunk])
        except WOULD_BLOCK:
            return False
        if n < len(mv):
            queue[0] = mv[n:]
            if n == 0:
                return False
        else:
            queue.popleft()
    return True


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view, pos = memoryview(buf), 0
    while pos < n:
        got = sock.recv_into(view[pos:])
        if got == 0:
            raise ConnectionError("connection closed")
        pos += got
    return bytes(buf)


def tune(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
