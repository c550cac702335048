"""How a mesh fails: :class:`TransportError`, and the faults its peers report.

Any fault (a peer that disconnects, stalls past the timeout, or sends a frame
that is not the expected one) raises :class:`TransportError` naming the peer
(its rank and what it holds) and the step. A peer that stops sends an ABORT
frame naming the fault as first seen (its ``origin``), or a BYE when its program
ended; :class:`_Faults` reads both (a malformed ABORT is a fault itself), salvages
an ABORT a peer sent before closing when a write to it fails, and names whom a
timed-out exchange was waiting for.

Threat model: a peer may send anything; an ABORT's text is at most
:data:`mpc.wire.frames.MAX_ABORT_BYTES` and is only reported, never acted on.
"""

from __future__ import annotations

from mpc.wire import frames as fr
from mpc.wire.mesh_state import _MeshState


class TransportError(RuntimeError):
    """A peer disconnected, stalled, or sent a frame the step did not expect.

    ``peer`` is the peer's rank (or None), ``step`` the exchange number. ``origin``: the fault
    as first seen, naming the participant that caused it (``"host-2 (parties 400-599)
    disconnected at step 3"``): the message itself, or, for a fault reported by a peer that
    stopped because of it, what that peer reported (this process passes it on when it stops).
    """

    def __init__(self, message: str, peer=None, step=None, origin: str | None = None):
        super().__init__(message)
        self.peer = peer
        self.step = step
        self.origin = origin or message


class _Faults(_MeshState):
    """Reading the faults a peer reports (ABORT, BYE) and naming the mesh's own."""

    def _check_abort(self, step, peer, h, who) -> None:
        if h["session"] != self.session or h["sender"] != peer or h["receiver"] != self.rank \
                or h["nbytes"] > fr.MAX_ABORT_BYTES:
            raise fr.FrameError(f"bad frame from {who} at step {step}: a malformed ABORT")

    def _aborted(self, step, peer, h, body: bytes, who) -> TransportError:
        """The error of an ABORT frame from ``peer``: what stopped it, and that it reported it."""
        text = body.decode("utf-8", "replace").strip() or f"{who} stopped"
        message = f"{text} (at step {step})" if h["segment"] == 1 else \
            f"{text} (reported by {who} at step {step})"
        return TransportError(message, peer, step, origin=text)

    def _ended(self, step, peer, h) -> TransportError:
        """A BYE where this step expects frames: the peer's program ended early (it diverged)."""
        return TransportError(fr.diverged(
            self.describe(peer), step, self._op, "the end of its program (it ended its part of "
            f"the run after its step {h['step']} and disconnected at step {step})"), peer, step)

    def _salvage(self, peer, step) -> TransportError | None:
        """After a write to ``peer`` failed: the ABORT it sent before closing, if the next bytes
        from it are one (it stopped because of another participant, whom it names), else None.
        Only when nothing of ``peer``'s frames is half read (the stream is at a frame)."""
        sock = self._peers.get(peer)
        if sock is None:
            return None
        try:
            sock.settimeout(0.2)
            head = bytearray()
            while len(head) < fr.FIXED_SIZE:
                got = sock.recv(fr.FIXED_SIZE - len(head))
                if not got:
                    return None
                head += got
            h = fr.decode_fixed(bytes(head))
            if h["kind"] == fr.BYE and h["sender"] == peer:
                return self._ended(step, peer, h)
            if h["kind"] != fr.ABORT:
                return None
            self._check_abort(step, peer, h, self.describe(peer))
            body = bytearray()
            while len(body) < h["nbytes"]:
                got = sock.recv(h["nbytes"] - len(body))
                if not got:
                    return None
                body += got
        except (OSError, ValueError):
            return None
        return self._aborted(step, peer, h, bytes(body), self.describe(peer))

    def _timed_out(self, step, sends, readers):
        waiting = [p for p, r in readers.items() if not r.done]
        relayed = self.relay.waiting_for() if self.relay is not None else []
        names = [self.describe(p) for p in waiting] + \
            [f"{self.describe(p)} through the relay" for p in relayed]
        if not names:
            names = [self.describe(p) for p in sends] or (
                ["the relay"] if self.relay is not None else [])
        what = "for" if waiting or relayed else "to write to"
        first = (waiting + relayed + list(sends) + [None])[0]
        raise TransportError(f"timed out after {self.timeout:g} s at step {step} waiting "
                             f"{what} {', '.join(names) or 'a peer'}", first, step)

    def origin(self, fault: BaseException) -> str:
        """The fault that stops this process as its peers should read it: a transport fault's
        origin (naming who caused it), else this process and its own error."""
        if isinstance(fault, TransportError):
            return fault.origin
        text = str(fault).strip().splitlines()[0] if str(fault).strip() else \
            type(fault).__name__
        if isinstance(fault, KeyboardInterrupt):
            text = "interrupted"
        return f"{self.describe(self.rank)} stopped: {text}"
