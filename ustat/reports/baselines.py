"""The release report of a run of a registry protocol: ``ustat estimate --protocol NAME``.

:func:`protocol_output` turns a :class:`ustat.baselines.ProtocolResult` into the dict
``ustat estimate KERNEL --protocol NAME --json`` prints (its ``to_dict()``, the spec
it ran included, plus the protocol's description and paper, the data's public
description, the phases, warnings and notes; every field is listed in docs/guides/cli.md);
:func:`print_protocol` prints it as text.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .common import (
    delta_text,
    epsilon_text,
    fmt,
    print_budget,
    print_classes,
    print_evaluation,
    processes_text,
    public_meta,
    traffic_text,
    wire_totals,
)

if TYPE_CHECKING:
    from ..baselines.result import ProtocolResult

__all__ = ["print_protocol", "protocol_output"]


def protocol_output(res: ProtocolResult, meta: dict, notes: list) -> dict:
    """The report of ``res`` (a :class:`~ustat.baselines.ProtocolResult`): ``meta`` the data's
    public description, ``notes`` to add after the run's own."""
    from ..baselines.registry import get

    info = get(res.protocol)
    out = res.to_dict()
    out.pop("communication", None)
    out.update({"description": info.description, "paper": info.paper, "data": public_meta(meta),
                "phases": res.communication.get("phases", {}), "warnings": []})
    out["notes"] = list(res.notes) + list(notes)
    if res.processes > 1:
        assert res.process_costs is not None        # a run across processes reports them
        out["wire"] = wire_totals(res.process_costs, res.online_bits + res.offline_bits)
    if "classes" in meta:
        out["classes"] = meta["classes"]
    ev = out.get("evaluation")
    if ev:
        raw, enc = ev.get("statistic_complete"), ev.get("statistic_discretized")
        ev["exact_raw"], ev["exact_encoded"] = raw, enc
        ev["encoding_error"] = None if raw is None or enc is None else enc - raw
    return out


def print_protocol(res: dict) -> None:
    """The text of a :func:`protocol_output` report."""
    print(f"{res['statistic']} ({res['kernel']}) by {res['protocol']} = {res['estimate']:.6g}")
    eps = res["epsilon"]
    print(f"  privacy   : {epsilon_text(eps if isinstance(eps, str) else float(eps), None)}"
          + delta_text(res.get("delta")) + f" ({res['dp_model']} DP)")
    ci = res.get("ci")
    if ci:
        print(f"  interval  : {100 * res['confidence']:g}% CI [{ci[0]:.6g}, {ci[1]:.6g}], noise "
              f"std {fmt(res['noise_std'])} ({res['ci_method']})")
    elif res.get("ci_method"):
        print(f"  interval  : none ({res['ci_method']})")
    print(f"  protocol  : {res['description']}")
    print(f"  trust     : {res['trust']}")
    params = ", ".join(f"{k}={v}" for k, v in res["params"].items()
                       if isinstance(v, (int, float, str, bool)))
    if params:
        print(f"  parameters: {params}")
    print_classes(res)
    print(f"  data      : n = {res['n']}, {res['data']['source']}")
    print(f"  traffic   : {traffic_text(res)}")
    if res.get("processes"):
        print(f"  processes : {processes_text(res)}")
    print(f"  time      : {res['seconds']:.2f} s")
    print_budget(res)
    if res.get("evaluation"):
        binned = "bins" in res["params"]
        print_evaluation(res, encoded="the discretized values" if binned else "the encoded values")
        mse = res["evaluation"].get("mse_thm5")
        if isinstance(mse, (int, float)) and math.isfinite(mse):
            print(f"              Theorem 5's MSE at these data: {fmt(mse)}")
    for note in res["notes"]:
        print(f"  note      : {note}")
