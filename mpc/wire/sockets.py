"""Socket plumbing shared by the mesh and the relay.

Used by :mod:`mpc.wire.transport` and :mod:`mpc.wire.relay`: the greeting
a connection opens with, and accepting peers: handshakes run concurrently,
each within :data:`HANDSHAKE_SECONDS`, and what is checked before a
connection is accepted (:func:`accept_peers`); non-blocking I/O on plain and TLS
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


#: seconds an accepted connection has, in all, to complete its TLS handshake and greeting
#: (then it is dropped and named among the refusals)
HANDSHAKE_SECONDS = 5.0
#: connections in their handshake at once; one more drops the oldest
MAX_HANDSHAKES = 64


class _Handshake:
    """One accepted connection still in its TLS handshake or greeting."""

    __slots__ = ("addr", "greeting", "shaken", "sock", "until")

    def __init__(self, sock: socket.socket, addr: tuple | None, until: float):
        self.sock, self.addr, self.until = sock, addr, until
        self.shaken = not isinstance(sock, ssl.SSLSocket)
        self.greeting = b""

    def where(self) -> str:
        return f"{self.addr[0]}:{self.addr[1]}" if self.addr else "a connection"


def accept_peers(listener: socket.socket, deadline: float, session: int, me: int,
                 wrap: Wrapper | None, waiting: set[int],
                 refused: list[str]) -> dict[int, socket.socket]:
    """Accept connections on ``listener`` until every rank in ``waiting`` has connected or
    ``deadline`` (``time.monotonic()``) has passed: ``{rank: socket}`` of those that did (each
    removed from ``waiting``; the sockets non-blocking).

    A connection is accepted if its TLS handshake (``wrap``: an
    :class:`mpc.wire.tls.Wrapper`; None: plain TCP), greeting and certificate are right: it must
    be for this run (``session``), to ``me``, from a rank in ``waiting``, with a certificate
    naming that rank's participant. Nothing else is read from it. Otherwise it is closed and
    the reason added to ``refused``.

    Threat model: anyone who can reach the port, before any authentication. Handshakes run
    concurrently (one selector, non-blocking sockets), so a silent or slow connection delays no
    other; each has :data:`HANDSHAKE_SECONDS` in all (not per read: a byte at a time does not
    extend it), and at most :data:`MAX_HANDSHAKES` are in progress at once (one more drops the
    oldest), so what an unauthenticated peer holds is bounded."""
    got: dict[int, socket.socket] = {}
    busy: dict[socket.socket, _Handshake] = {}
    sel = selectors.DefaultSelector()
    listener.setblocking(False)
    sel.register(listener, selectors.EVENT_READ, None)

    def drop(h: _Handshake, why: str) -> None:
        refused.append(f"{h.where()}: {why}")
        busy.pop(h.sock, None)
        select_socket(sel, h.sock, 0, None)
        with contextlib.suppress(OSError):
            h.sock.close()

    def advance(h: _Handshake) -> None:
        try:
            if not h.shaken:
                cast(ssl.SSLSocket, h.sock).do_handshake()
                h.shaken = True
            while len(h.greeting) < HELLO.size:
                data = h.sock.recv(HELLO.size - len(h.greeting))
                if not data:
                    raise ConnectionError("connection closed")
                h.greeting += data
            sender = _check_greeting(h.greeting, session, me, waiting)
            if wrap is not None:
                wrap.verify(cast(ssl.SSLSocket, h.sock), sender)
        except ssl.SSLWantWriteError:
            select_socket(sel, h.sock, selectors.EVENT_WRITE, h)
            return
        except WOULD_BLOCK:
            select_socket(sel, h.sock, selectors.EVENT_READ, h)
            return
        except (OSError, ConnectionError, ssl.SSLError) as e:
            drop(h, reason(e))
            return
        busy.pop(h.sock)
        select_socket(sel, h.sock, 0, None)
        waiting.discard(sender)
        got[sender] = h.sock

    try:
        while waiting:
            now = time.monotonic()
            if now >= deadline:
                break
            for h in [h for h in busy.values() if h.until <= now]:
                drop(h, f"no TLS handshake and greeting within {HANDSHAKE_SECONDS:g} s "
                        "(dropped)")
            until = min([deadline] + [h.until for h in busy.values()])
            for key, _ in sel.select(max(0.0, until - now)):
                if key.data is not None:
                    if key.data.sock in busy:
                        advance(key.data)
                    continue
                while True:                                 # every connection queued
                    try:
                        sock, addr = listener.accept()
                    except WOULD_BLOCK:
                        break
                    except OSError as e:                    # out of descriptors, ...
                        refused.append(f"a connection: {reason(e)}")
                        break
                    if len(busy) >= MAX_HANDSHAKES:
                        drop(min(busy.values(), key=lambda h: h.until),
                             f"more than {MAX_HANDSHAKES} connections in handshake at once "
                             "(the oldest dropped)")
                    try:
                        tune(sock)
                        sock.setblocking(False)
                        if wrap is not None:    # a non-blocking socket: handshake left to us
                            sock = wrap(sock, True, None)
                    except (OSError, ssl.SSLError) as e:
                        refused.append(f"{addr[0]}:{addr[1]}: {reason(e)}")
                        with contextlib.suppress(OSError):
                            sock.close()
                        continue
                    h = _Handshake(sock, addr, time.monotonic() + HANDSHAKE_SECONDS)
                    busy[sock] = h
                    advance(h)
                if not waiting:
                    break
    finally:
        for h in list(busy.values()):
            drop(h, "still in its handshake when the wait ended")
        sel.close()
    return got


def _check_greeting(data: bytes, session: int, me: int, waiting: Container[int]) -> int:
    """The sender rank of a greeting ``data`` that is for this run and ``me`` from a rank in
    ``waiting``; ConnectionError saying what is wrong otherwise."""
    magic, version, kind, sess, sender, receiver = HELLO.unpack(data)
    if (magic, version, kind) != (fr.MAGIC, fr.VERSION, fr.HELLO):
        raise ConnectionError("its greeting is not ours")
    if sess != session or receiver != me:
        raise ConnectionError("its greeting is for another run or another participant")
    if sender not in waiting:
        raise ConnectionError(f"it claims rank {sender}, which is not expected here")
    return int(sender)


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
