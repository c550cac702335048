"""What every release report shares: numbers and sizes as text, the data description, wire
totals of a run across processes, class and evaluation lines, the budget line."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "API_FLAGS",
    "cli_words",
    "delta_text",
    "epsilon_text",
    "fmt",
    "present",
    "print_budget",
    "print_classes",
    "print_evaluation",
    "processes_text",
    "public_meta",
    "size_text",
    "strip_warning",
    "traffic_text",
    "wire_totals",
]


def present(v: Any) -> Any:
    """A field's value, or None when it is unset (None, NaN, an empty list, dict or string)."""
    import math

    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (list, tuple, dict, str)) and len(v) == 0:
        return None
    return v


def wire_totals(process_costs: Iterable[dict], counted_bits: int) -> dict:
    """Payload, framing and frames written by all processes of a run, and the counted bytes."""
    pay = sum(p["wire"]["payload_bytes_sent"] for p in process_costs)
    head = sum(p["wire"]["header_bytes_sent"] for p in process_costs)
    return {"payload_bytes": pay, "framing_bytes": head,
            "framing_over_payload": head / pay if pay else 0.0,
            "counted_bytes": counted_bits / 8,
            "frames": sum(p["wire"]["frames_sent"] for p in process_costs)}


def processes_text(res: dict) -> str:
    """The text report's line on a run across processes (``res["processes"]``, ``res["wire"]``)."""
    w = res["wire"]
    return (f"{res['processes']} on this machine (loopback); sockets carried "
            f"{size_text(8 * w['payload_bytes'])} of payload in {w['frames']} frames, framing "
            f"{w['framing_bytes']} bytes ({100 * w['framing_over_payload']:.3f}%)")


def public_meta(meta: dict) -> dict:
    """The data description without the file's SHA-256: a hash of every record is not released
    (who knows all records but one could test guesses of the last); the budget file keeps it."""
    return {k: v for k, v in meta.items() if k != "sha256"}


_SPLIT_NAMES = {"statistic": "statistic", "class_counts": "class counts"}


def fmt(v: float | None) -> str:
    return "n/a" if v is None else format(v, ".6g")


def epsilon_text(eps: float | str, split: dict | None) -> str:
    """"epsilon 1 = 0.9 statistic + 0.1 class counts (n_pos)", or "epsilon 1"."""
    head = f"epsilon {eps:g}" if isinstance(eps, (int, float)) else f"epsilon {eps}"
    if not split or len(split) < 2:
        return head
    parts = []
    for k, v in split.items():
        name = _SPLIT_NAMES.get(k, f"class counts ({k})" if k.startswith("n_") else k)
        parts.append(f"{v:.4g} {name}")
    return head + " = " + " + ".join(parts)


def delta_text(delta: float | None) -> str:
    """", delta 7.3e-13" for a release that spends one, else ""."""
    return f", delta {delta:.3g}" if delta else ""


def size_text(bits: float) -> str:
    """A bit count in readable units: 6 kB, 1.25 MB, 3.1 GB (bytes, powers of 1000)."""
    b = bits / 8
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


def traffic_text(res: dict) -> str:
    off_rounds = res.get("offline_rounds")
    return (f"online {size_text(res['online_bits'])} in {res['rounds']} rounds, offline "
            f"{size_text(res['offline_bits'])}"
            + (f" in {off_rounds} rounds" if off_rounds else "")
            + f", max per party {size_text(res['max_party_bits'])}")


def print_classes(res: dict) -> None:
    if "classes" in res:
        c = res["classes"]
        pairs = ", ".join(f"{lab} -> {i}" for i, lab in enumerate(c["classes"]))
        print(f"  classes   : {c['column']}: {pairs} ({c['rule']})")


def print_evaluation(res: dict, sampled: str | None = None,
                     encoded: str = "the encoded inputs") -> None:
    """Exact statistic on the raw values, on what the protocol computed on, and their gap."""
    ev, stat = res["evaluation"], res["statistic"]
    line = (f"  evaluation: exact {stat} on the raw values = {fmt(ev.get('exact_raw'))}, on "
            f"{encoded} = {fmt(ev.get('exact_encoded'))} (difference "
            f"{fmt(ev.get('encoding_error'))})")
    print(line)
    if sampled and ev.get("statistic_incomplete") is not None:
        print(f"              on {sampled}: {fmt(ev['statistic_incomplete'])}; read in the clear")
    else:
        print("              read in the clear (not private)")


def print_budget(res: dict) -> None:
    """The text line of a run's budget (every command)."""
    if "budget" in res:
        b = res["budget"]
        delta = (f", delta {b['spent_delta']:.3g} of {b['total_delta']:.3g}"
                 if b.get("total_delta") else "")
        print(f"  budget    : spent {b['spent']:g} of {b['total']:g} on this data set "
              f"(this run {b['this_run']:g}, remaining {b['remaining']:g}){delta} in {b['file']}")


def strip_warning(msg: str) -> str:
    """The text without leading "warning:" prefixes (the CLI adds exactly one)."""
    text = str(msg).strip()
    while text.lower().startswith("warning:"):
        text = text[len("warning:"):].lstrip()
    return text


#: Spec fields and keywords of the Python API, and the command-line flags that set them.
API_FLAGS = {"aux_epsilon_fraction": "--aux-epsilon-fraction", "max_colluders": "--max-colluders",
             "committee_size": "--committee-size", "noise_bits": "--noise-bits",
             "frac_bits": "--frac-bits", "input_frac_bits": "--frac-bits",
             "threat_model": "--threat-model", "f_h": "--honest-fraction",
             "honest_fraction": "--honest-fraction", "committee_fail": "--committee-fail",
             "noise_method": "--noise-method", "backend": "--backend"}


def cli_words(text: str) -> str:
    """A message of the Python layer with its keyword names replaced by the CLI flags."""
    import re

    return re.sub(r"\b(" + "|".join(map(re.escape, API_FLAGS)) + r")\b(=\.\.\.)?",
                  lambda m: API_FLAGS[m.group(1)], text)
