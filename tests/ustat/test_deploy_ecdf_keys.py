"""A deployed quantile with one malicious party host (issue 39): its parties' DCF keys carry
weight 1000; the servers (key check on by default in a deployment) drop them, report how
many, and the release is within the noise of the honest hosts' release.

The malicious host is a real participant process: a ``sitecustomize`` module on its
PYTHONPATH (this test's, nothing in the package) wraps ``fss.dcf.gen`` in the process whose
command line names its parties, so only that host's keys are malformed. Loopback only; the
participants are stopped by the deployment runner's timeouts.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from ustat.cli import main
from ustat.cli.deploy import job_from_command
from ustat.deploy import init

from .test_deploy import LOCAL, _bank_rows, _deploy_cli, _ports

SITE = '''
import os, sys
_who = os.environ.get("USTAT_TEST_MALICIOUS_PARTIES")
if _who and _who in sys.argv:
    import numpy as np
    import fss.dcf as _dcf
    _real = _dcf.gen
    def _gen(params, alpha, beta, rng, **kw):
        return _real(params, alpha, np.full(np.shape(alpha), 1000, np.int64), rng, **kw)
    _dcf.gen = _gen
'''


@pytest.mark.slow
def test_a_deployed_quantile_with_a_malicious_host_drops_its_keys(tmp_path, capsys,
                                                                  monkeypatch):
    n, per_host = 300, 100
    csv = _bank_rows(tmp_path, n)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE)
    args = ["--column", "age", "--bounds", "18:95", "--thresholds", "32", "--q", "0.25,0.5,0.75",
            "--epsilon", "5", "--seed", "3"]
    d = str(tmp_path / "dep")
    init(d, n, job_from_command(["quantile", *args], n), hosts=3, base_port=_ports(),
         insecure=True, keys=LOCAL)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), root]))
    monkeypatch.setenv("USTAT_TEST_MALICIOUS_PARTIES", f"{n - per_host}-{n - 1}")   # host-2
    got = _deploy_cli(d, csv)
    assert got["account"]["keys_verified"] and got["account"]["keys_dropped"] == per_host
    # the honest hosts' release: their rows alone, the same seed
    honest = tmp_path / "honest.csv"
    with open(csv) as f:
        lines = f.readlines()
    honest.write_text("".join(lines[:n - per_host + 1]))
    monkeypatch.delenv("USTAT_TEST_MALICIOUS_PARTIES")
    assert main(["quantile", *args, "--csv", str(honest), "--verify-keys", "--json",
                 "--no-progress"]) == 0
    want = json.loads(capsys.readouterr().out)
    assert got["n"] == want["n"] == n - per_host
    lo, hi = np.array(want["quantile_ci"]).T
    q = np.array(got["quantiles"])
    assert np.all((lo <= q) & (q <= hi)), (got["quantiles"], want["quantile_ci"])


@pytest.mark.parametrize("flag, on", [([], True), (["--no-verify-keys"], False)])
def test_deployments_verify_keys_by_default(flag, on):
    job = job_from_command(["quantile", "--column", "age", "--bounds", "18:95", *flag], 100)
    assert job.spec.execution.verify_keys is on
