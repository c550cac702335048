"""The JSON object and the text report of ``ustat estimate`` (U-MPC runs).

Fields of :class:`ustat.umpc.UMPCResult` added by newer builds (``estimate_raw``,
``noise_std``, ``confidence``, ``ci``, ``ci_method``, ``epsilon_split``,
``precision``, ``warnings``; evaluation ``exact_raw``, ``exact_encoded``,
``encoding_error``) are read with ``getattr`` and shown when present.
"""

from __future__ import annotations

import math

from .budget import print_budget
from .common import cli_words, strip_warning

__all__ = ["public_meta", "estimate_output", "print_estimate", "epsilon_text", "fmt", "size_text",
           "traffic_text", "delta_text", "wire_summary", "wire_totals", "processes_text"]

NEW_FIELDS = ("estimate_raw", "noise_std", "confidence", "ci", "ci_method", "precision")


def _collusion(args, res, n: int) -> dict | None:
    """The DP guarantee against coalitions (noise.collusion), in the release's terms."""
    from noise import collusion, distributed

    if "u" not in res.aux.get("noise", {}):
        return None
    tm = res.threat_model
    method = getattr(res, "noise_method", "") or "polya"
    colluders = args.max_colluders if tm == "dis" and method == "polya" else None
    plan = distributed.noise_plan(tm, n, max_colluders=colluders,
                                  committee_size=args.committee_size if tm == "hf" else None,
                                  fail=args.fail, f_h=args.honest_fraction, method=method)
    parts = [(i["epsilon"], i["scale_ring_units"]) for i in res.aux["noise"].values()]
    out = collusion.release_guarantee(plan, parts, args.honest_fraction)
    out.update(method=method, delta=getattr(res, "delta", 0.0))
    return out


def _present(v):
    """A field's value, or None when it is unset (None, NaN, an empty list, dict or string)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (list, tuple, dict, str)) and len(v) == 0:
        return None
    return v


def _epsilon_split(res) -> dict | None:
    split = getattr(res, "epsilon_split", None)
    if split:
        return dict(split)
    if not math.isfinite(res.epsilon):
        return None
    out = {"statistic": res.epsilon - res.aux["epsilon"]}
    out.update({name: res.aux["epsilon"] for name in res.aux["names"]})
    return out


def _evaluation(kern, res, X) -> dict:
    """run_umpc's evaluation with the exact statistic on the raw (unencoded) values added."""
    ev = dict(res.evaluation)
    if "exact_raw" not in ev:
        from ..baselines._common import evaluation

        raw = evaluation(kern, X)["statistic_complete"]
        enc = ev.get("statistic_complete")
        ev["exact_raw"], ev["exact_encoded"] = raw, enc
        ev["encoding_error"] = None if raw is None or enc is None else enc - raw
    return ev


def estimate_output(args, kern, res, X, meta, notes, delta: float = 0.0) -> dict:
    out = {
        "protocol": "umpc", "kernel": res.kernel, "statistic": res.statistic,
        "estimate": res.estimate, "epsilon": res.epsilon if math.isfinite(res.epsilon) else "inf",
        "n": res.n, "degree": res.degree, "edges": res.edges, "sampler": res.sampler,
        "max_degree": res.max_degree, "threat_model": res.threat_model,
        "noise_method": getattr(res, "noise_method", "") or None,
        "backend": getattr(res, "backend", "dealer"), "trust": _trust(res),
        "backend_trust": getattr(res, "backend_trust", ""),
        "workers": getattr(res, "workers", None), "scheduler": getattr(res, "scheduler", None),
        "delta": delta, "noise_scale": res.noise_scale, "u_hat": res.u_hat,
        "online_bits": res.online_bits, "offline_bits": res.offline_bits, "rounds": res.rounds,
        "max_party_bits": res.max_party_bits, "mean_party_bits": res.mean_party_bits,
        "seconds": res.seconds, "stage_seconds": getattr(res, "stage_seconds", {}),
        "insecure_seed": res.insecure_seed, "data": public_meta(meta),
        "phases": res.communication["phases"],
        "notes": res.notes + notes + kern.release_notes(res.u_hat, res.aux["noisy_sums"], res.n),
        "warnings": [cli_words(strip_warning(w)) for w in getattr(res, "warnings", None) or []],
    }
    if getattr(res, "processes", 1) > 1:
        out["processes"] = res.processes
        out["process_costs"] = res.process_costs
        out["wire"] = wire_summary(res)
    out["params"] = _params(args, res)
    for name in NEW_FIELDS:
        v = _present(getattr(res, name, None))
        if v is not None:
            out[name] = list(v) if name == "ci" else v
    if "classes" in meta:
        out["classes"] = meta["classes"]
    split = _epsilon_split(res)
    if split is not None:
        out["epsilon_split"] = split
        coll = _collusion(args, res, res.n)
        if coll is not None:
            out["collusion"] = coll
            # the total noise is a Polya(R) difference: variance 2 R b^2 (b: DLap scale of U)
            out["noise_std_u"] = math.sqrt(2 * coll["variance_factor"]) * res.noise_scale
    unit_col = kern.extra.get("data_units")
    if unit_col is not None and "bounds" in meta:
        lo, hi = meta["bounds"][unit_col]
        out["estimate_data_units"] = res.estimate * (hi - lo)
        if "noise_std" in out:
            out["noise_std_data_units"] = out["noise_std"] * (hi - lo)
        if "ci" in out:
            out["ci_data_units"] = [v * (hi - lo) for v in out["ci"]]
    if res.aux["names"]:
        out["aux_noisy_sums"] = dict(zip(res.aux["names"], res.aux["noisy_sums"]))
        out["aux_epsilon"] = res.aux["epsilon"]
    if res.evaluation is not None:
        out["evaluation"] = _evaluation(kern, res, X)
    return out


def wire_summary(res) -> dict:
    """What the run's processes wrote to their sockets, next to what the network counted."""
    return wire_totals(res.process_costs, res.online_bits + res.offline_bits)


def wire_totals(process_costs, counted_bits: int) -> dict:
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


def _params(args, res) -> dict:
    """The U-MPC parameters of this run: resolved ones and every option the user gave."""
    out = {"edges": res.edges, "sampler": res.sampler, "threat_model": res.threat_model,
           "aux_epsilon_fraction": getattr(res, "aux_epsilon_fraction", None)
           if args.aux_epsilon_fraction is None else args.aux_epsilon_fraction,
           "backend": getattr(res, "backend", "dealer")}
    for key in ("max_colluders", "committee_size", "honest_fraction", "fail", "workers", "pool",
                "scheduler", "bits", "frac_bits", "resolution", "confidence", "noise_method"):
        value = getattr(args, key, None)
        if value is not None:
            out[key] = value
    return out


def public_meta(meta: dict) -> dict:
    """The data description without the file's SHA-256: a hash of every record is not released
    (who knows all records but one could test guesses of the last); the budget file keeps it."""
    return {k: v for k, v in meta.items() if k != "sha256"}


def _trust(res) -> str:
    from ..baselines.registry import umpc_trust

    text = umpc_trust(res.threat_model, getattr(res, "noise_method", None))
    backend_trust = getattr(res, "backend_trust", "")
    if not backend_trust:
        return text
    dealer = "a trusted dealer provides the preprocessing"
    said = f"backend {getattr(res, 'backend', 'dealer')}: {backend_trust}"
    return text.replace(dealer, said) if dealer in text else f"{text}; {said}"


_THREAT_TEXT = {
    "dis": "M_Dis: noise among all parties",
    "hf": "M_HF: honest fraction, noise by a random committee",
}
_METHOD_TEXT = {"mpc": "sampled inside MPC", "polya": "Polya shares"}
_SPLIT_NAMES = {"statistic": "statistic", "class_counts": "class counts"}


def fmt(v) -> str:
    return "n/a" if v is None else format(v, ".6g")


def epsilon_text(eps, split: dict | None) -> str:
    """"epsilon 1 = 0.9 statistic + 0.1 class counts (n_pos)", or "epsilon 1"."""
    head = f"epsilon {eps:g}" if isinstance(eps, (int, float)) else f"epsilon {eps}"
    if not split or len(split) < 2:
        return head
    parts = []
    for k, v in split.items():
        name = _SPLIT_NAMES.get(k, f"class counts ({k})" if k.startswith("n_") else k)
        parts.append(f"{v:.4g} {name}")
    return head + " = " + " + ".join(parts)


def delta_text(delta) -> str:
    """", delta 7.3e-13" for a release that spends one, else ""."""
    return f", delta {delta:.3g}" if delta else ""


def size_text(bits) -> str:
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


def _headline(res: dict) -> str:
    text = f"{res['statistic']} ({res['kernel']}) = {res['estimate']:.6g}"
    raw = res.get("estimate_raw")
    if raw is not None and raw != res["estimate"]:
        text += f"   [{raw:.6g} before clamping to the valid range]"
    if "estimate_data_units" in res:
        text += f"   [{res['estimate_data_units']:.6g} in data units]"
    return text


def _uncertainty(res: dict) -> str | None:
    parts = []
    if res.get("noise_std") is not None:
        parts.append(f"DP noise std {res['noise_std']:.3g}")
    elif "noise_std_u" in res and res["statistic"] == "U-statistic":
        parts.append(f"DP noise std {res['noise_std_u']:.3g}")
    if res.get("ci") is not None:
        lo, hi = res["ci"]
        level = res.get("confidence")
        parts.append((f"{100 * level:g}% " if level is not None else "")
                     + f"interval [{lo:.6g}, {hi:.6g}]")
    if "noise_std_data_units" in res or "ci_data_units" in res:
        sd, ci = res.get("noise_std_data_units"), res.get("ci_data_units")
        parts.append("in data units: " + ", ".join(
            ([f"std {sd:.6g}"] if sd is not None else [])
            + ([f"interval [{ci[0]:.6g}, {ci[1]:.6g}]"] if ci is not None else [])))
    return ", ".join(parts) if parts else None


def _wrapped(label: str, text: str) -> str:
    import textwrap

    return textwrap.fill(text, width=100, initial_indent=f"  {label:<10}: ",
                         subsequent_indent=" " * 14)


def _precision_text(prec: dict) -> str:
    known = {"bits", "frac_bits", "input_frac_bits", "resolution", "encoding", "units",
             "input_scale"}
    text = (f"ring {prec.get('bits')} bits, {prec.get('frac_bits')} fractional bits for the "
            f"output" + (f", {prec['input_frac_bits']} for the inputs"
                         if prec.get("input_frac_bits") is not None else "")
            + (f" ({prec['encoding']} encoding)" if prec.get("encoding") else ""))
    if prec.get("resolution") is not None:
        text += f"; inputs resolved to {prec['resolution']:.3g}"
        text += f" [{prec['units']}]" if prec.get("units") else ""
    rest = {k: v for k, v in prec.items() if k not in known}
    return text + "".join(f", {k} {v}" for k, v in rest.items())


def print_estimate(res: dict):
    print(_headline(res))
    unc = _uncertainty(res)
    if unc:
        print(_wrapped("accuracy", unc))
    if res.get("ci_method"):
        print(_wrapped("interval", res["ci_method"]))
    method = _METHOD_TEXT.get(res.get("noise_method"))
    print(f"  privacy   : {epsilon_text(res['epsilon'], res.get('epsilon_split'))}"
          f"{delta_text(res.get('delta'))} (threat model {_THREAT_TEXT[res['threat_model']]}"
          + (f", {method})" if method else ")"))
    coll = res.get("collusion")
    if coll:
        print(f"  inputs    : {coll['input_privacy'].removeprefix('inputs ')}")
        print(f"  collusion : {coll['summary']}")
        print(f"              with all but one contributor colluding: epsilon "
              f"{coll['epsilon_all_but_one']:.4g}")
    print_classes(res)
    print(f"  data      : n = {res['n']}, {res['data']['source']}")
    print(f"  edges     : {res['edges']} ({res['sampler']}), max degree {res['max_degree']}")
    prec = res.get("precision")
    if prec:
        print(_wrapped("precision", _precision_text(prec)))
    print(f"  engine    : backend {res['backend']}"
          + (f" ({res['backend_trust']})" if res.get("backend_trust") else "")
          + (f", {res['workers']} worker(s)" if res.get("workers") else "")
          + (f", scheduler {res['scheduler']}" if res.get("scheduler") else ""))
    print(f"  traffic   : {traffic_text(res)}")
    if res.get("processes"):
        print(f"  processes : {processes_text(res)}")
    stages = ", ".join(f"{name} {sec:.2f}" for name, sec in res.get("stage_seconds", {}).items())
    print(f"  time      : {res['seconds']:.2f} s" + (f" ({stages})" if stages else ""))
    print_budget(res)
    if "evaluation" in res:
        print_evaluation(res, sampled=f"the {res['edges']} sampled edges")
    for note in res["notes"]:
        print(f"  note      : {note}")


def print_classes(res: dict):
    if "classes" in res:
        c = res["classes"]
        pairs = ", ".join(f"{lab} -> {i}" for i, lab in enumerate(c["classes"]))
        print(f"  classes   : {c['column']}: {pairs} ({c['rule']})")


def print_evaluation(res: dict, sampled: str | None = None, encoded: str = "the encoded inputs"):
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
