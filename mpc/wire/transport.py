"""Moving typed frames between the processes of one run: a mesh of socket connections.

:class:`SocketMesh` connects the P processes of a run pairwise (plain TCP
on loopback here; mutually authenticated TLS across hosts, see
:mod:`mpc.wire.tls`), and runs one *exchange* at a time: this process writes its
frames for the step to each peer and reads, from each peer, exactly the
frames the step expects (:mod:`mpc.wire.frames`). The network
(:class:`mpc.comm.network.Network`) computes both sides of that from the public
routing of the step's messages, so a process never waits for a frame that
is not coming and never reads past the step's last expected byte (what a
peer already sent for a later step stays in the kernel's buffer).

An exchange is one loop over non-blocking sockets (:mod:`selectors`):
headers are read first and checked against the expectation, then each
payload is received straight into a buffer of exactly its announced size
(``recv_into``), and sent from the packed arrays without copies
(``send`` on memoryviews). Writing and reading to and from every peer go
on together, so two peers sending each other large frames never block.

Every exchange has a timeout (``timeout`` seconds, default
:data:`DEFAULT_TIMEOUT`). Any fault (a peer that disconnects, stalls past
the timeout, or sends a frame that is not the expected one) raises
:class:`TransportError` naming the peer (its rank and what it holds) and
the step, and breaks the mesh: every later exchange raises at once, so the
protocol stops with no release. The launcher (:mod:`mpc.run.launch`) stops the
other processes.

Counters (:class:`WireCounts`): frames, header (framing) bytes and payload
bytes written and read, so that what went over the sockets can be compared
with what the network counted.

TLS (``wrap=``, an :class:`mpc.wire.tls.Wrapper`): every connection is TLS 1.3
with mutual authentication; the peer's certificate must chain to the
deployment's CA and name the participant its rank must be, checked after
the handshake and the greeting, before any frame is read. A connection
that fails is refused and named in the error if its peer never comes.
The sockets stay non-blocking in the same selector loop: ``SSLWantRead``
/ ``SSLWantWrite`` mean "not now", and bytes TLS has already decrypted
(``pending()``, invisible to ``select``) are read before waiting.

Relay (``relayed=`` ranks, ``connect(..., relay=...)``): frames to those
peers go through the relay, sealed end to end (:mod:`mpc.wire.relay_client`).

Counters (:class:`WireCounts`): frames, header (framing) bytes and payload
bytes written and read, so that what went over the sockets can be compared
with what the network counted; and the bytes TCP carried (TLS records,
handshakes and envelopes included), read from the kernel (``TCP_INFO``).

Threat model: plain TCP (no ``wrap``) only between the run's own processes
on one machine (loopback); across hosts, TLS as above.

Where the parts live: :class:`SocketMesh` is this module's exchange loop,
progress lines and closing, on top of parts that share its fields
(:mod:`mpc.wire.mesh_state`: the fields, timeouts and caps): connecting, the
greeting and the relay (:mod:`mpc.wire.connecting`), writing and reading frames
(:mod:`mpc.wire.frame_io`), dropouts (:mod:`mpc.wire.dropouts`), faults and
:class:`TransportError` (:mod:`mpc.wire.faults`), counters
(:mod:`mpc.wire.counts`). One class, cut by seam, rather than objects of their
own: one exchange reads and writes every peer's socket, its dropouts and its
faults in the same selector loop.
"""

from __future__ import annotations

import contextlib
import math
import os
import selectors
import signal
import time
from typing import Any

from mpc.wire import frames as fr
from mpc.wire.connecting import _Connecting
from mpc.wire.counts import WireCounts
from mpc.wire.faults import TransportError
from mpc.wire.frame_io import Expected, Outgoing, _FrameIO
from mpc.wire.frame_io import _Reader as _Reader
from mpc.wire.mesh_state import (
    CONNECT_TIMEOUT,
    DEFAULT_TIMEOUT,
    MAX_BUFFERED_BYTES,
    MAX_FRAME_BYTES,
)
from mpc.wire.sockets import listen_socket, select_socket

__all__ = ["CONNECT_TIMEOUT", "DEFAULT_TIMEOUT", "MAX_BUFFERED_BYTES", "MAX_FRAME_BYTES",
           "Expected", "Outgoing", "SocketMesh", "TransportError", "WireCounts",
           "new_session_id"]


class SocketMesh(_Connecting, _FrameIO):
    """Pairwise socket connections between the P processes of one run.

    Make it with :meth:`open` (bind a listening socket and learn its port),
    then :meth:`connect` with every rank's address. ``describe(rank)`` names
    what a peer holds, for error messages. ``delay``: seconds slept before
    every exchange (a stand-in for one-way latency: this machine's kernel
    has no ``netem``).
    """

    def __init__(self, rank: int, n_procs: int, session: int, *, timeout=DEFAULT_TIMEOUT,
                 describe=None, delay: float = 0.0, wrap=None, relayed=(),
                 connect_timeout: float | None = None, may_vanish=()):
        self.rank = int(rank)
        self.n_procs = int(n_procs)
        self.session = int(session)
        self.timeout = float(timeout)
        self.delay = float(delay)
        self.describe = describe or (lambda r: f"process {r}")
        self.counts = WireCounts()
        self._wrap = wrap            # (sock, server_side, peer) -> socket: TLS in mpc.wire.tls
        self.counts.tls = wrap is not None
        self.connect_timeout = CONNECT_TIMEOUT if connect_timeout is None \
            else float(connect_timeout)
        self.relayed = frozenset(int(r) for r in relayed)   # peers reached through the relay
        self.relay = None   # once connected
        #: peers whose absence at start-up is a dropout, not a fault (party hosts of a run
        #: that tolerates dropouts, :mod:`ustat.umpc.dropouts`); ``gone``: those absent
        self.may_vanish = frozenset(int(r) for r in may_vanish) - {self.rank}
        self.gone = set()
        #: called with the name of each protocol step this process starts
        #: (:func:`ustat.umpc.progress.at_step`): a progress line, or a test's fault injection
        self.on_step = None
        self.refused = []      # connections refused while waiting for peers (why)
        self._tcp_base = (0, 0)
        self._peers = {}
        self._broken = None
        self._last_step = 0
        self._op = 0                    # the operation of the current step (frames.op_tag)
        self._unsent = {}       # peer -> what an exchange that failed left unwritten
        self._readers = {}      # peer -> its reader, in the exchange under way
        self._listener = None
        self._sel = selectors.DefaultSelector()
        self.port = None
        #: progress lines (``"step 12"``, ``"step 23: waiting 10 s for host-0 (...)"``) go to
        #: this callable, at most one every :attr:`progress_every` seconds (None: none)
        self.progress = None
        self.progress_every = 5.0
        #: tests only (``USTAT_TEST_VANISH``, :mod:`ustat.deploy.participant`): (peer rank,
        #: ``before`` / ``between`` / ``after``), see :meth:`_test_vanish`; None: never
        self.vanish_at = None
        self._said = -math.inf

    # -- set-up -------------------------------------------------------------------------------
    @classmethod
    def open(cls, rank: int, n_procs: int, session: int, *, host: str = "127.0.0.1",
             port: int = 0, **kw: Any) -> SocketMesh:
        """A mesh end listening on ``host:port`` (port 0: any free port; see :attr:`port`)."""
        mesh = cls(rank, n_procs, session, **kw)
        lst = listen_socket(host, port, mesh.describe(rank))
        lst.listen(max(8, n_procs))
        mesh._listener = lst
        mesh.port = lst.getsockname()[1]
        return mesh

    # -- exchanges ----------------------------------------------------------------------------
    def exchange(self, step: int, out: dict, expect: dict) -> dict:
        """Write ``out[peer]`` (lists of :class:`Outgoing`), read ``expect[peer]`` (lists of
        :class:`Expected`); returns ``{peer: [array, ...]}`` in the expected order."""
        if self._broken is not None:
            raise self._broken
        t0 = time.perf_counter()
        self._say(f"step {int(step)}", first=self.counts.exchanges == 0)
        self._last_step = int(step)
        self._op = next((f.op for fs in (*out.values(), *expect.values()) for f in fs), 0)
        try:
            if self.delay:
                time.sleep(self.delay)
            if self.vanish_at is not None:
                self._test_vanish(int(step), out, "before")
            got = self._exchange(int(step), out, expect)
            if self.vanish_at is not None:
                self._test_vanish(int(step), out, "after")
            return got
        except TransportError as e:
            self._broken = e
            raise
        finally:
            self.counts.wait_seconds += time.perf_counter() - t0
            self.counts.exchanges += 1

    def _test_vanish(self, step, out, when: str) -> None:
        """The test hook :attr:`vanish_at` = (peer, mode): at the first exchange sending to
        ``peer`` (a direct peer), this process kills itself (SIGKILL: no BYE, no ABORT) ``before``
        anything is sent, ``between`` (``peer``'s frames written in full, nobody else's) or
        ``after`` the exchange."""
        peer, mode = self.vanish_at or (None, "")
        if not out.get(peer) or (mode == "after") != (when == "after"):
            return
        if mode == "between":
            sock = self._peers[peer]
            sock.setblocking(True)
            for part in self._queue(step, peer, out[peer]):
                sock.sendall(part)
        os.kill(os.getpid(), signal.SIGKILL)

    def _exchange(self, step, out, expect):
        filled = {}
        if self.gone:       # vanished peers: nothing sent to them, zeros for what they owed
            out = {p: f for p, f in out.items() if p not in self.gone}
            filled = {p: [fr.zeros_of(x) for x in e] for p, e in expect.items() if p in self.gone}
            expect = {p: e for p, e in expect.items() if p not in self.gone}
        got = self._exchange_live(step, out, expect)
        got.update(filled)
        return got

    def _exchange_live(self, step, out, expect):
        rel: Any = self.relay          # typed loosely: checked once, used in the loop
        if rel is not None:
            rel.begin(step, {p: f for p, f in out.items() if p in self.relayed and f},
                      {p: e for p, e in expect.items() if p in self.relayed and e})
        sends = {}
        for peer, frames in out.items():
            if frames and peer not in self.relayed:
                sends[peer] = self._queue(step, peer, frames)
        readers = {peer: _Reader(peer, specs) for peer, specs in expect.items()
                   if specs and peer not in self.relayed}
        for peer in set(sends) | set(readers):
            self._watch(peer, peer in sends, peer in readers)
        for peer in set(self._peers) - set(sends) - set(readers):
            select_socket(self._sel, self._peers[peer], selectors.EVENT_READ, ("idle", peer))
        deadline = time.monotonic() + self.timeout
        self._unsent = sends
        self._readers = readers
        try:
            while sends or any(not r.done for r in readers.values()) or \
                    (rel is not None and not rel.done):
                left = deadline - time.monotonic()
                if left <= 0:
                    self._timed_out(step, sends, readers)
                if self.progress is not None:
                    self._say_waiting(step, sends, readers, self.timeout - left)
                if rel is not None:
                    select_socket(self._sel, rel.sock, selectors.EVENT_READ |
                                 (selectors.EVENT_WRITE if rel.queue else 0), "relay")
                events = self._sel.select(0 if self._has_pending(readers) else
                                          min(left, 1.0, self.progress_every))
                for key, mask in events:
                    peer = key.data
                    if isinstance(peer, tuple):
                        self._idle(step, peer[1])
                        continue
                    if peer == "relay":
                        if mask & selectors.EVENT_WRITE:
                            rel.write(step)
                        if mask & selectors.EVENT_READ:
                            rel.read(step)
                        continue
                    # nested: the inner condition is the write itself, not a test
                    if mask & selectors.EVENT_WRITE and peer in sends:  # noqa: SIM102
                        if self._write(step, peer, sends[peer]) and peer in sends:
                            del sends[peer]
                            self._watch(peer, False, peer in readers and
                                        not readers[peer].done)
                    if mask & selectors.EVENT_READ and peer in readers \
                            and not readers[peer].done:
                        self._read(step, readers[peer])
                        if readers[peer].done:
                            self._watch(peer, peer in sends, False)
                self._read_pending(step, readers, sends)
        finally:
            for peer in self._peers:
                self._watch(peer, False, False)
            if rel is not None:
                select_socket(self._sel, rel.sock, 0, "relay")
        got = {peer: r.out for peer, r in readers.items()}
        if rel is not None:
            got.update(rel.take())
            self.gone |= rel.gone
        return got

    def _say(self, text: str, first: bool = False) -> None:
        if self.progress is not None and (first or
                                          time.monotonic() - self._said >= self.progress_every):
            self._said = time.monotonic()
            self.progress(text)

    def _say_waiting(self, step, sends, readers, waited: float) -> None:
        if waited < self.progress_every or \
                time.monotonic() - self._said < self.progress_every:
            return
        names = [self.describe(p) for p, r in readers.items() if not r.done]
        if self.relay is not None:
            names += [f"{self.describe(p)} through the relay" for p in self.relay.waiting_for()]
        names += [f"{self.describe(p)} to read" for p in sends]
        self._say(f"step {step}: waiting {waited:.0f} s for {', '.join(names) or 'the relay'}")

    # -- plumbing -----------------------------------------------------------------------------
    def close(self, error: BaseException | None = None) -> None:
        """Close every connection (idempotent). After a clean run: BYE to every direct peer
        (:meth:`_idle`: a peer closing without one was killed) and to the relay. After a
        broken one (an exchange failed, or ``error``: this process stops because of it), every
        peer is told why first: an ABORT frame to each direct peer and an ABORT to the relay
        (which tells the other hosts), carrying the fault as first seen (its ``origin``, naming
        the participant that caused it), so each peer's error names that participant rather
        than this process, which only passed it on."""
        fault = self._broken or error
        origin = None if fault is None else self.origin(fault)
        if fault is not None and self._peers:
            self._abort_peers(origin or "", not isinstance(fault, TransportError))
        elif self._peers:
            self._say_bye()
        if self.relay is not None:
            self.relay.close(fault is None, origin or "")
            self.relay = None
        for sock in self._peers.values():
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(sock)
            with contextlib.suppress(OSError):
                sock.close()
        self._peers.clear()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        self._sel.close()

    def _say_bye(self) -> None:
        """A BYE frame to every direct peer (best effort): this process ended well, so its
        closing connection is not a fault to a peer still running."""
        for peer, sock in self._peers.items():
            try:
                sock.setblocking(True)
                sock.settimeout(0.5)
                sock.sendall(fr.bye_frame(self.session, self.rank, peer, self._last_step))
            except (OSError, ValueError):
                continue

    def _abort_peers(self, why: str, first_hand: bool) -> None:
        """Best effort, at most about a second in all: finish the frame each peer was being
        sent (a half-sent frame would make the ABORT unreadable), then send it the ABORT."""
        until = time.monotonic() + 1.0
        step = self._broken.step if self._broken is not None and self._broken.step else 0
        for peer, sock in self._peers.items():
            left = until - time.monotonic()
            if left <= 0:
                break
            try:
                sock.setblocking(True)
                sock.settimeout(min(left, 0.5))
                for part in self._unsent.get(peer, ()):
                    sock.sendall(part)
                sock.sendall(fr.abort_frame(self.session, int(step), self.rank, peer, why,
                                            first_hand))
            except (OSError, ValueError):
                continue
        self._unsent = {}


def new_session_id() -> int:
    """A random 64-bit tag for a run (frames of another run are refused)."""
    return int.from_bytes(os.urandom(8), "little")
