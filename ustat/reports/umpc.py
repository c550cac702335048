"""The release report of a U-MPC run: the JSON object and the text of ``ustat estimate``.

:func:`estimate_output` turns a :class:`ustat.umpc.UMPCResult` and the
:class:`ustat.specs.UMPCSpec` it ran into the dict ``ustat estimate --json``
prints (every field is listed in docs/guides/cli.md); a deployment's aggregator
builds the same dict (:mod:`ustat.deploy`). :func:`print_estimate` prints it
as text.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..specs.umpc import UMPCSpec
from ..umpc.privacy import umpc_trust
from .common import (
    cli_words,
    delta_text,
    epsilon_text,
    present,
    print_budget,
    print_classes,
    print_evaluation,
    processes_text,
    public_meta,
    strip_warning,
    traffic_text,
    wire_totals,
)

if TYPE_CHECKING:
    from ..umpc.protocol import UMPCResult

__all__ = ["estimate_output", "print_estimate", "wire_summary"]

NEW_FIELDS = ("estimate_raw", "noise_std", "confidence", "ci", "ci_method", "precision")


def _collusion(spec: UMPCSpec, res, n: int) -> dict | None:
    """The DP guarantee against coalitions (noise.collusion), in the release's terms."""
    from noise import collusion, distributed

    if "u" not in res.aux.get("noise", {}):
        return None
    tm = res.threat_model
    method = getattr(res, "noise_method", "") or "polya"
    pr = spec.privacy
    colluders = pr.max_colluders if tm == "dis" and method == "polya" else None
    plan = distributed.noise_plan(tm, n, max_colluders=colluders,
                                  committee_size=pr.committee_size if tm == "hf" else None,
                                  fail=pr.committee_fail, f_h=pr.honest_fraction, method=method)
    parts = [(i["epsilon"], i["scale_ring_units"]) for i in res.aux["noise"].values()]
    out = collusion.release_guarantee(plan, parts, pr.honest_fraction)
    out.update(method=method, delta=getattr(res, "delta", 0.0),
               # whom epsilon_all_but_one is against (besides the aggregator): all but one of
               # the noise's contributors, i.e. of the committee under hf, of the n parties
               # under dis
               all_but_one_colluders=plan.contributors - 1)
    return out


def _epsilon_split(res) -> dict | None:
    split = getattr(res, "epsilon_split", None)
    if split:
        return dict(split)
    if not math.isfinite(res.epsilon):
        return None
    out = {"statistic": res.epsilon - res.aux["epsilon"]}
    out.update(dict.fromkeys(res.aux["names"], res.aux["epsilon"]))
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


def estimate_output(spec: UMPCSpec, res: UMPCResult, X: np.ndarray | None, meta: dict,
                    notes: list, delta: float = 0.0, engine: dict | None = None) -> dict:
    """The report of ``res`` (a :class:`~ustat.umpc.UMPCResult` of ``spec``): ``X`` the
    records in [0, 1] (for the exact statistic of an evaluation; None without one),
    ``meta`` the data's public description, ``notes`` to add, ``delta`` the release's,
    ``engine`` the executor options the user gave (workers, pool, scheduler)."""
    kern = spec.kern
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
    out["params"] = _params(spec, res, engine or {})
    out["spec"] = spec.to_dict()
    for name in NEW_FIELDS:
        v = present(getattr(res, name, None))
        if v is not None:
            out[name] = list(v) if name == "ci" else v
    if "classes" in meta:
        out["classes"] = meta["classes"]
    dropouts = getattr(res, "dropouts", None)
    if dropouts:
        out["dropouts"] = dict(dropouts)           # parties_lost, edges_lost, step
    split = _epsilon_split(res)
    if split is not None:
        out["epsilon_split"] = split
        coll = _collusion(spec, res, res.n)
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
    edge = getattr(res, "edge_aux", None) or {}
    if edge.get("names"):           # Kendall: the released fraction of untied pairs over E
        out["edge_aux_noisy_means"] = dict(zip(edge["names"], edge["noisy_means"]))
        out["edge_aux_epsilon"] = edge["epsilon"]
    if res.evaluation is not None:
        out["evaluation"] = _evaluation(kern, res, X)
    return out


def wire_summary(res: UMPCResult) -> dict:
    """What the run's processes wrote to their sockets, next to what the network counted."""
    return wire_totals(res.process_costs, res.online_bits + res.offline_bits)


#: (report key, spec group, field) of the options a report names when they differ from the
#: default; honest_fraction and fail are always named
_NAMED = (("max_colluders", "privacy", "max_colluders"),
          ("committee_size", "privacy", "committee_size"),
          ("bits", "precision", "bits"), ("frac_bits", "precision", "frac_bits"),
          ("resolution", "precision", "resolution"), ("noise_method", "privacy", "noise_method"))


def _params(spec: UMPCSpec, res, engine: dict) -> dict:
    """The U-MPC parameters of this run: resolved ones and every option set apart from its
    default (and the executor options the user gave)."""
    pr = spec.privacy
    out = {"edges": res.edges, "sampler": res.sampler, "threat_model": res.threat_model,
           "aux_epsilon_fraction": getattr(res, "aux_epsilon_fraction", None)
           if pr.aux_epsilon_fraction is None else pr.aux_epsilon_fraction,
           "backend": getattr(res, "backend", "dealer"),
           "honest_fraction": pr.honest_fraction, "fail": pr.committee_fail}
    for key, group, name in _NAMED:
        value = getattr(getattr(spec, group), name)
        if value is not None and value != "half":
            out[key] = value
    if spec.confidence != 0.95:
        out["confidence"] = spec.confidence
    out.update({k: v for k, v in engine.items() if v is not None})
    return out


def _trust(res) -> str:
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
_METHOD_TEXT: dict[str | None, str] = {"mpc": "sampled inside MPC", "polya": "Polya shares"}


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


def print_estimate(res: dict) -> None:
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
        who = "committee members" if res["threat_model"] == "hf" else "parties"
        print(f"              with all but one contributor colluding "
              f"({coll['contributors'] - 1} of the {coll['contributors']} {who}, with the "
              f"aggregator): epsilon {coll['epsilon_all_but_one']:.4g}")
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


