"""Every participant of a deployment in a thread of this process (plain TCP on loopback): the
quick way to run a deployment several times in a test. Each thread is joined with a bounded
timeout; what each participant returned or raised is collected."""

from __future__ import annotations

import argparse
import threading
from typing import Any

from ustat.cli.budget import Charge
from ustat.deploy import load
from ustat.deploy.runner import run_participant


def ledger(cfg) -> Charge:
    """The releasing role's ledger as ``ustat serve`` gives it (``[run.budget]``)."""
    b = cfg.budget
    return Charge(argparse.Namespace(budget_file=b["file"], budget_total=b.get("total"),
                                     budget_delta=b.get("total_delta")))


def run_threads(directory: str, csv: dict, *, salt_dir: str, timeout: float = 120.0,
                charge: Charge | None = None) -> tuple[dict, dict, Charge | None]:
    """Run the deployment in ``directory``; ``csv[name]``: each party host's file. Returns
    ``(results, errors, charge)`` by participant name; the charge is settled as ``ustat serve``
    settles it (confirmed on success or once computing started, else given back)."""
    cfg = load(directory)
    out: dict[str, Any] = {}
    errs: dict[str, BaseException] = {}
    charge = charge or (ledger(cfg) if cfg.budget else None)

    def one(p):
        releaser = p.role in ("aggregator", "analyst")
        try:
            out[p.name] = run_participant(
                cfg, p.name, csv.get(p.name), tls=False,
                ledger=charge if releaser else None, salt=f"{salt_dir}/{p.name}.salt")
        except BaseException as e:
            errs[p.name] = e
        if releaser and charge is not None:
            charge.settle(ok=p.name not in errs)

    ts = [threading.Thread(target=one, args=(p,), daemon=True) for p in cfg.participants]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
    assert not any(t.is_alive() for t in ts), "a participant never ended"
    return out, errs, charge
