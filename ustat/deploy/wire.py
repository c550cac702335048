"""Bytes on the wire of a deployment, per participant, next to what the protocol counted.

Each participant reports what TCP carried on its connections during the
protocol (``tcp_bytes_sent``: TLS records, frame headers, relay envelopes
and end-to-end tags included; from the kernel's ``TCP_INFO``), the
protocol's payload bytes and framing apart, and its start-up
(``tcp_setup_bytes_sent``: TLS handshakes, greetings, X25519 keys, the joint
key). The *overhead* is what the participants put on the wire beyond the
payload of the messages that cross processes (their counted bits / 8, up to
a byte per frame): framing + TLS + end-to-end encryption. Messages between
parties of the same host never leave it (``local_bytes``: counted, not
sent). The relay's
re-sending of host-to-host frames is reported apart (it forwards what the
hosts already sent).
"""

from __future__ import annotations


def summary(release: dict, participants: list) -> dict:
    ranked = [p for p in participants if p["role"] != "relay"]
    tcp = sum(p["wire"].get("tcp_bytes_sent", 0) for p in ranked)
    setup = sum(p["wire"].get("tcp_setup_bytes_sent", 0) for p in ranked)
    payload = sum(p["wire"].get("payload_bytes_sent", 0) for p in ranked)
    framing = sum(p["wire"].get("header_bytes_sent", 0) for p in ranked)
    comm = release.get("communication") or release       # ECDF commands / ustat estimate
    counted = (comm.get("online_bits", 0) + comm.get("offline_bits", 0)) / 8
    relay = next((p for p in participants if p["role"] == "relay"), None)
    return {"counted_bytes": counted, "payload_bytes": payload, "framing_bytes": framing,
            "local_bytes": max(0.0, counted - payload), "tcp_bytes": tcp, "tcp_setup_bytes": setup,
            "overhead_bytes": tcp - payload,
            "overhead_ratio": (tcp - payload) / payload if payload else 0.0,
            "relay_forwarded_bytes": None if relay is None else
            relay["wire"].get("tcp_bytes_sent", 0)}


def print_wire(res: dict) -> None:
    w = res["wire"]
    print(f"  wire      : {w['tcp_bytes']:,} bytes sent by the participants for "
          f"{w['payload_bytes']:,} bytes of messages between processes: overhead "
          f"{100 * w['overhead_ratio']:.2f}% (framing, TLS, end-to-end); "
          f"{w['local_bytes']:,.0f} counted bytes stayed inside a host; start-up "
          f"{w['tcp_setup_bytes']:,} bytes")
    for p in res["participants"]:
        sent = p["wire"].get("tcp_bytes_sent", 0)
        pay = p["wire"].get("payload_bytes_sent")
        extra = "" if pay is None else f" ({pay:,} payload)"
        print(f"    {p['name']:<12} {p['role']:<11} {sent:>14,} bytes{extra}  "
              f"{p['seconds']:.2f} s")
