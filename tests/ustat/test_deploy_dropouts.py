"""Dropouts in a deployment (issue 36 item 5): the bound deploy.toml states.

No processes are started: ``max_dropouts`` is read, defaulted and checked
when ``deploy.toml`` is loaded.
"""

import pytest

pytest.importorskip("cryptography")

from ustat.cli.deploy import job_from_command
from ustat.deploy import init, load

from .test_deploy import KENDALL, _ports


def _dep(tmp_path, line=None):
    d = str(tmp_path / "dep")
    init(d, 20, job_from_command(["estimate", *KENDALL], 20), hosts=4, base_port=_ports(),
         insecure=True)
    if line is not None:
        path = tmp_path / "dep" / "deploy.toml"
        path.write_text(path.read_text().replace("[deployment]\n", f"[deployment]\n{line}\n", 1))
    return d


def test_max_dropouts_defaults_to_a_third_of_the_parties(tmp_path):
    cfg = load(_dep(tmp_path))
    assert cfg.max_dropouts is None and cfg.dropout_bound == 6     # floor(19 / 3)


@pytest.mark.parametrize(("line", "bound"), [("max_dropouts = 0", 0), ("max_dropouts = 5", 5),
                                             ("max_dropouts = 18", 18)])
def test_max_dropouts_is_read_from_deploy_toml(tmp_path, line, bound):
    assert load(_dep(tmp_path, line)).dropout_bound == bound


@pytest.mark.parametrize(("line", "why"), [("max_dropouts = -1", "integer >= 0"),
                                           ("max_dropouts = 1.5", "integer >= 0"),
                                           ("max_dropouts = true", "integer >= 0"),
                                           ("max_dropouts = 19", "fewer than 2")])
def test_a_bad_max_dropouts_is_one_line_naming_the_file(tmp_path, line, why):
    with pytest.raises(ValueError, match=why) as e:
        load(_dep(tmp_path, line))
    assert "deploy.toml" in str(e.value) and "\n" not in str(e.value)
