"""The Sinh-Ramon authors' own code run on our inputs, beside their published results files.

Where our numbers differ from the paper's, this script runs the authors'
implementation (github.com/anonguest1398/federated-U-statistics) on the same
inputs, so that a difference can be put down to their code, their setting or
ours with a run rather than a guess. Nothing of theirs is in this
repository: ``--authors DIR`` is a git clone of their repository; the script
extracts the pinned commit :data:`CODE_COMMIT` into a scratch directory and
runs :mod:`experiments._authors_driver` there in a subprocess (with
``--authors-python`` or ``$USTAT_AUTHORS_PYTHON``, default this interpreter;
their ``kendall_ghazi`` needs numpy < 2, the versions of their
requirements.txt: a Python with numpy >= 2 is refused with an error rather
than the Ghazi runs dropped). Their results
files are read at :data:`RESULTS_COMMIT`.

Pinned commits (their history changed the noise law and |E| after the
results files were written):

* ``RESULTS_COMMIT`` 0119b99 (2026-02-02, the snapshot's head): results/
  gini, kendall, duplicate (unchanged since the first commit f81c43f) and
  kendall_appendix, duplicate_appendix (added in 6b2abc9).
* ``CODE_COMMIT`` afebd15 (2026-01-27): the first commit with their
  experiments/comparison.py; its protocols/ are those of f81c43f, which
  added the results files: U-MPC noise Laplace(2 / (epsilon n)) on the mean,
  |E| = int(0.02 C(n, 2)) in comparison.py for Gini and Kendall. Later
  commits changed the noise to Laplace(max degree / epsilon) on the sum
  (f7982a9; the same at balanced |E|) and |E| to 2n (0119b99, after the
  results files), and broke ours_wo_repl (3c8894d: ``cpt`` undefined).

Jobs (their functions, our data, MSE against their compute_real_U):

* Table 2: ours_wo_repl and ours_bernoulli (alpha = 0.5) on bank.csv's job
  (12 codes) at |E| = int(0.5 C(n, 2)), epsilon = 1, n = 4521; their
  balanced sampler takes about 33 CPU minutes per run there (a Python loop
  over the n vertices for each of the 5.1 million edges), so the three
  samplers also run on the first 1000 records at the same density.
* Kendall (Fig. 4) and Gini (Fig. 1): ours_balanced at |E| = 2n (the
  captions) and int(0.02 C(n, 2)) (their comparison.py when the results were
  written); Kendall at 0.02 C(n, 2) 20 times at epsilon 1 and 10 at 0.1
  (about 75-100 s a run: their sampler scans the parties in Python for each
  edge); Gini also
  at n = 100 (both |E|, 20 runs), n = 5000 (both |E|, 7 runs, their
  comparison.py's nb_test) and n = 7000 (both |E|, 7 runs; 0.02 C(n, 2)
  there takes about 270 s a run). Each U-MPC line records
  their Laplace draw (``noise``) and the error of the sampled pairs alone
  (``sampling_err``).
* Bell on Kendall: kendall_bell (t = 8, "64" cells, on Heart subsets as
  their appendix file; t = 4 on Bank subsets of 500 and 1000 records and
  5 times at the full n = 4521, as their file's 5 runs: about 120 s a run).
* Ghazi and GhaziSM on Kendall: kendall_ghazi and kendall_ghazi_shuffle on
  Bank, t = 4 and 64, epsilon = 1.

Full mode takes about 2.5 hours on one core (the Table 2 runs at 5.1 million
edges dominate). Quick mode: 300 records and single
runs, about a minute. ``--reuse CSV`` (a previous ``authors_code.csv``) keeps
the rows of every planned run found there (the seeds do not depend on the
counts) and runs only the others (``--groups``, ``--limit``: only some of
them, in stages, each reusing the last stage's CSV); each row names the
``commit`` it was made at.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile

import numpy as np

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias
from experiments import _verdict as V  # noqa: N812 - the codebase's short capital module alias
from experiments._authors_runs import _run_key, group_commits, reuse

REPO_URL = "https://github.com/anonguest1398/federated-U-statistics"
RESULTS_COMMIT = "0119b99ffe5ec1f534f36ed27523085c94364931"
CODE_COMMIT = "afebd15684a84c9b8a85f836223c71cd04ba3c7c"
DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_authors_driver.py")


class AuthorsCodeMissing(C.MissingData):
    """No usable checkout of the authors' repository (the message says how to get one)."""


def extra_args(ap):
    ap.add_argument("--authors", default=os.environ.get("USTAT_AUTHORS_DIR"),
                    help=f"a git clone of {REPO_URL} (or $USTAT_AUTHORS_DIR)")
    ap.add_argument("--authors-python", default=os.environ.get("USTAT_AUTHORS_PYTHON",
                                                               sys.executable),
                    help="the Python that runs their code (numpy < 2 for kendall_ghazi)")
    ap.add_argument("--reuse", default=None,
                    help="a previous authors_code.csv: keep its rows of planned runs, run the rest")
    ap.add_argument("--groups", default=None,
                    help="with --reuse: run only the missing runs of these groups (a,b); the "
                         "others stay missing from the output")
    ap.add_argument("--limit", type=int, default=None,
                    help="with --reuse: run at most this many missing runs (in plan order)")


def _git(repo, *args, binary=False):
    proc = subprocess.run(["git", "-C", repo, *args], capture_output=True, timeout=120,
                          text=not binary)
    if proc.returncode != 0:
        err = proc.stderr if not binary else proc.stderr.decode(errors="replace")
        raise AuthorsCodeMissing(
            f"git {' '.join(args)} failed in {repo}: {err.strip()} (clone {REPO_URL}; it must "
            f"contain commits {CODE_COMMIT[:7]} and {RESULTS_COMMIT[:7]})")
    return proc.stdout


def check_checkout(repo) -> str:
    if not repo:
        raise AuthorsCodeMissing(f"authors_code needs --authors DIR: git clone {REPO_URL}")
    repo = os.path.abspath(os.path.expanduser(repo))
    for c in (CODE_COMMIT, RESULTS_COMMIT):
        _git(repo, "cat-file", "-e", f"{c}^{{commit}}")
    return repo


def extract_code(repo, dest) -> str:
    """The pinned commit's tree in ``dest`` (git archive; the clone is left as it is)."""
    tar = _git(repo, "archive", "--format=tar", CODE_COMMIT, binary=True)
    path = os.path.join(dest, f"federated-U-statistics-{CODE_COMMIT[:7]}")
    os.makedirs(path, exist_ok=True)
    with tempfile.TemporaryFile() as fh:
        fh.write(tar)
        fh.seek(0)
        with tarfile.open(fileobj=fh) as tf:
            tf.extractall(path, filter="data")
    return path


def results_text(repo, name: str) -> str:
    return _git(repo, "show", f"{RESULTS_COMMIT}:results/{name}")


def parse_results(text: str) -> list:
    """Rows of one of their tab-separated results files (empty cells: None; a header per block)."""
    rows, header = [], None
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = line.split("\t")
        if not _is_number(cells[0]):
            header = [c.strip() for c in cells]
            continue
        rows.append({h: (float(c) if c.strip() else None)
                     for h, c in zip(header, cells) if h})
    return rows


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def file_mse(rows, column, **where) -> tuple[float, float, int]:
    """Mean, its standard error and the count of a results file's squared errors."""
    v = [r[column] for r in rows if r.get(column) is not None
         and all(abs(r.get(k, math.nan) - x) < 1e-9 for k, x in where.items())]
    if not v:
        return math.nan, math.nan, 0
    m, se = C.mean_se(v)
    return m, se, len(v)


def inputs(run, quick) -> dict:
    """The data sets as arrays (their encodings: min-max scaling, job codes / 11)."""
    from mpc.arith.rng import CSPRNG

    lim = 300 if quick else None
    codes, _ = C.bank_jobs(lim)
    heart = C.heart_table(["trestbps", "chol"])
    heart = heart[np.all(np.isfinite(heart), axis=1)]
    heart = (heart - heart.min(axis=0)) / (heart.max(axis=0) - heart.min(axis=0))
    n_unif = 200 if quick else 1000
    jobs = codes.reshape(-1).astype(np.float64) / 11.0
    return {"job": jobs, "job-small": jobs[:100 if quick else 1000],
            "bank": C.bank_small(limit=lim),
            "heart": heart,
            "uniform": CSPRNG(run.seed_for("uniform")).random(n_unif),
            **({} if quick else {f"uniform-{n}": CSPRNG(run.seed_for(f"uniform-{n}")).random(n)
                                 for n in GINI_N})}


#: The Gini figure's other n run with their code (full mode; n = 1000 is "uniform").
GINI_N = (100, 5000, 7000)
#: Runs at |E| = 0.02 C(n, 2) by n (about 100 s a run at n = 5000, 270 s at 7000).
GINI_RUNS_002 = {100: 20, 5000: 7, 7000: 7}


def plan(run, data, quick) -> list:
    """The runs (see the module docstring), each a dict for the driver."""
    out = []

    def add(count, **job):
        for r in range(count):
            label = ":".join(str(job[k]) for k in sorted(job))
            out.append({**job, "run": r, "seed": run.seed_for(label, r)})

    n_job, n_bank, n_u = len(data["job"]), len(data["bank"]), len(data["uniform"])
    for sampler, count in (("wo", 2 if quick else 20), ("bern", 2 if quick else 20)):
        add(count, group="table2", kind="umpc", data="job", kernel="duplicate", sampler=sampler,
            edges=int(0.5 * math.comb(n_job, 2)), alpha=0.5, epsilon=1.0)
    n_small = len(data["job-small"])        # their balanced sampler: ~33 CPU minutes at n = 4521
    for sampler in ("balanced", "wo", "bern"):
        add(1 if quick else 5, group="table2-small", kind="umpc", data="job-small",
            kernel="duplicate", sampler=sampler, edges=int(0.5 * math.comb(n_small, 2)),
            alpha=0.5, epsilon=1.0)
    for eps in (0.1, 1.0):
        for edges, count in ((2 * n_bank, 2 if quick else 10),
                             (int(0.02 * math.comb(n_bank, 2)),
                              1 if quick else 20 if eps == 1.0 else 10)):
            add(count, group="kendall-umpc", kind="umpc", data="bank", kernel="kendall",
                sampler="balanced", edges=edges, epsilon=eps)
    for edges in (2 * n_u, int(0.02 * math.comb(n_u, 2))):
        add(2 if quick else 7, group="gini-umpc", kind="umpc", data="uniform", kernel="gini",
            sampler="balanced", edges=edges, epsilon=1.0)
    for n in () if quick else GINI_N:
        for edges, count in ((2 * n, 20 if n <= 1000 else 7),
                             (int(0.02 * math.comb(n, 2)), GINI_RUNS_002.get(n, 0))):
            add(count, group="gini-umpc", kind="umpc", data=f"uniform-{n}", kernel="gini",
                sampler="balanced", edges=edges, epsilon=1.0)
    for n in ((41,) if quick else (41, 208, 834)):
        add(1 if quick else 3, group="heart-bell", kind="bell", data="heart", kernel="kendall",
            t=8, subset=n, epsilon=1.0)
    for eps in (0.1, 1.0):
        for subset, count in (((100, 1),) if quick else ((500, 3), (1000, 1), (None, 5))):
            add(count, group="bank-bell", kind="bell", data="bank", kernel="kendall", t=4,
                subset=subset, epsilon=eps)
    for t, count in (((4, 1),) if quick else ((4, 2), (64, 2))):
        add(count, group="bank-ghazi", kind="ghazi", data="bank", kernel="kendall", t=t,
            epsilon=1.0)
    return out


def numpy_major(python) -> int:
    proc = subprocess.run([python, "-c", "import numpy; print(numpy.__version__)"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AuthorsCodeMissing(f"{python} cannot import numpy: {proc.stderr.strip()}")
    return int(proc.stdout.split(".")[0])


def require_numpy1(python, runs) -> None:
    """Refuse (one clear error) a Python with numpy >= 2 when the plan has Ghazi runs: their
    kendall_ghazi fails under numpy 2, and dropping those runs silently would leave the
    Ghazi rows without the runs they cite."""
    if any(r["kind"] == "ghazi" for r in runs) and numpy_major(python) >= 2:
        raise AuthorsCodeMissing(
            f"{python} has numpy >= 2, under which the authors' kendall_ghazi fails: pass "
            "--authors-python (or set USTAT_AUTHORS_PYTHON) to a Python with \"numpy<2\" and "
            "\"scipy==1.11.4\" (experiments/README.md, 'The authors' code')")


def run_driver(python, code_dir, work, data, runs, label) -> list:
    """Run the driver over ``runs`` (progress on stderr); its JSON lines as dicts."""
    paths = {}
    for k, v in data.items():
        paths[k] = os.path.join(work, f"{k}.npy")
        np.save(paths[k], v)
    spec = os.path.join(work, "jobs.json")
    with open(spec, "w") as fh:
        json.dump({"data": paths, "runs": runs}, fh)
    env = {**os.environ, "PYTHONPATH": code_dir, "PYTHONHASHSEED": "0"}
    rows = []
    with C.Progress(len(runs), label) as bar:
        proc = subprocess.Popen([python, DRIVER, spec], cwd=code_dir, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen = set()
        for line in proc.stdout:
            row = json.loads(line)
            rows.append(row)
            key = (row["seed"], row["run"])
            if key not in seen:
                seen.add(key)
                bar.advance()
        err = proc.stderr.read()
        if proc.wait() != 0:
            raise RuntimeError(f"the authors' code failed: {err.strip()[-2000:]}")
    return rows


def summarize(rows) -> dict:
    """MSE +- s.e. per (group, protocol, setting)."""
    keys = ("group", "protocol", "sampler", "edges", "epsilon", "t", "subset", "data")
    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    out = {}
    for key, sel in groups.items():
        errs = [r["sq_err"] for r in sel if r["sq_err"] is not None]
        m, se = C.mean_se(errs) if errs else (math.nan, math.nan)
        commits: dict = {}
        for r in sel:
            c = str(r.get("commit") or "unknown")[:7]
            commits[c] = commits.get(c, 0) + 1
        out[key] = {**dict(zip(keys, key)), "runs": len(sel), "mse": m, "se": se,
                    "seconds": float(np.median([r["seconds"] for r in sel])),
                    "commits": commits}
    return out


def error_parts(rows, sizes) -> list:
    """Rows [kernel, n, |E|, epsilon, runs, mean sampling_err^2 +- se, mean noise^2 +- se, MSE]
    of the U-MPC runs that recorded their noise: which part of their error is which."""
    groups: dict = {}
    for r in rows:
        if r.get("sampling_err") is not None:
            key = (r["kernel"], sizes[r["data"]], r["edges"], r["epsilon"])
            groups.setdefault(key, []).append(r)
    out = []
    for (kernel, n, edges, eps), sel in sorted(groups.items()):
        samp = C.mean_se([r["sampling_err"] ** 2 for r in sel])
        noise = C.mean_se([r["noise"] ** 2 for r in sel])
        mse = C.mean_se([r["sq_err"] for r in sel])
        out.append([kernel, n, edges, eps, len(sel), C.pm(*samp), C.pm(*noise), C.pm(*mse)])
    return out


def noise_law(n, eps) -> float:
    """Variance of their U-MPC noise at CODE_COMMIT: Laplace(2 / (epsilon n)) on the mean."""
    return 2 * (2 / (eps * n)) ** 2


def comparisons(stats, files, sizes) -> dict:
    """Per group: table rows [setting, file mean +- se (count), code MSE +- se (runs), ratio,
    note] and a one-sentence fact."""
    out = {}

    def cell(m, se, k):
        return "-" if not k else f"{C.pm(m, se)} ({k})"

    def row(setting, f, s, extra=None):
        ratio = f[0] / s["mse"] if f[2] and s["mse"] > 0 else None
        return [setting, cell(*f), cell(s["mse"], s["se"], s["runs"]), ratio, extra]

    t2 = []
    for group, n in (("table2", sizes["job"]), ("table2-small", sizes["job-small"])):
        for sampler, col in (("balanced", "bal1"), ("wo", "wo1"), ("bern", "bern1")):
            s = next((v for k, v in stats.items() if k[0] == group and k[2] == sampler), None)
            if s is None:
                continue
            f = (file_mse(files["duplicate"], col, ratio=0.5) if group == "table2"
                 else (math.nan, math.nan, 0))
            t2.append(row(f"{sampler}, n = {n}", f, s, noise_law(n, 1.0)))
    out["table2"] = t2
    kd = []
    for k, s in sorted(stats.items(), key=lambda kv: (str(kv[0]), )):
        if k[0] != "kendall-umpc":
            continue
        f = file_mse(files["kendall"], "o20", epsilon=k[4])
        kd.append(row(f"epsilon {C.fmt(k[4])}, |E| = {k[3]}", f, s, noise_law(sizes["bank"], k[4])))
    out["kendall-umpc"] = kd
    gi = []
    for k, s in sorted((kv for kv in stats.items() if kv[0][0] == "gini-umpc"),
                       key=lambda kv: (sizes[kv[0][7]], kv[0][3])):
        n = sizes[k[7]]
        gi.append(row(f"n = {n}, |E| = {k[3]}", file_mse(files["gini"], "o_balanced", n=n), s,
                      noise_law(n, 1.0)))
    out["gini-umpc"] = gi
    hb = []
    for k, s in sorted((kv for kv in stats.items() if kv[0][0] == "heart-bell"),
                       key=lambda kv: kv[0][6]):
        hb.append(row(f"n = {k[6]}, t = 8 (64 cells)",
                      file_mse(files["kendall_appendix"], "bell", n=k[6], bins=64), s))
    out["heart-bell"] = hb
    bb = []
    for k, s in sorted((kv for kv in stats.items() if kv[0][0] == "bank-bell"),
                       key=lambda kv: (kv[0][4], kv[0][6] or 10 ** 9)):
        bb.append(row(f"epsilon {C.fmt(k[4])}, n = {k[6] or sizes['bank']}, t = 4",
                      file_mse(files["kendall"], "bell", epsilon=k[4], bins=16), s))
    out["bank-bell"] = bb
    gh = []
    for k, s in sorted((kv for kv in stats.items() if kv[0][0] == "bank-ghazi"),
                       key=lambda kv: (kv[0][1], kv[0][5])):
        col = "ghazi" if k[1] == "ghazi" else "ghazi_shuffle"
        gh.append(row(f"{'Ghazi' if k[1] == 'ghazi' else 'GhaziSM'}, t = {k[5]}",
                      file_mse(files["kendall"], col, epsilon=k[4], bins=k[5] ** 2), s))
    out["bank-ghazi"] = gh
    return out


def agree(r) -> bool:
    """A file mean and a code MSE agree when their ratio ``r[3]`` is within 2x either way
    (:data:`experiments._verdict.RATIO_MAX`, as ``summary.regenerates`` counts them)."""
    return r[3] is not None and 1 / V.RATIO_MAX <= r[3] <= V.RATIO_MAX


TITLES = {
    "table2": "Table 2: duplicate pair ratio on job, |E| = int(0.5 C(n, 2)), epsilon = 1",
    "kendall-umpc": "Fig. 4: U-MPC (ours_balanced) on Kendall, Bank (age, balance)",
    "gini-umpc": "Fig. 1: U-MPC (ours_balanced) on Gini, uniform data",
    "heart-bell": "Fig. 5: Bell (kendall_bell) on Heart subsets",
    "bank-bell": "Fig. 4: Bell (kendall_bell) on Bank",
    "bank-ghazi": "Fig. 4: Ghazi and GhaziSM (kendall_ghazi, kendall_ghazi_shuffle) on Bank",
}
EXTRA = {"table2": "their noise law", "kendall-umpc": "their noise law",
         "gini-umpc": "their noise law"}


def facts(tables, commits=None) -> dict:
    """One sentence per group, computed from the table (what the README quotes)."""
    out = {}
    commits = commits or {}
    for g, rows in tables.items():
        if not rows:
            continue
        parts = [f"{r[0]}: their code {r[2]}, their file {r[1]}" for r in rows]
        same = sum(agree(r) for r in rows if r[3] is not None)
        comparable = sum(r[3] is not None for r in rows)
        made = commits.get(g, {})
        where = ", ".join(f"{k} ({v})" for k, v in sorted(made.items()))
        out[g] = (f"authors' code ({CODE_COMMIT[:7]}) on our inputs"
                  + (f", {sum(made.values())} runs made at {where}" if made else "")
                  + ", MSE: " + "; ".join(parts)
                  + f" (file and code within {V.RATIO_MAX:g}x in {same} of {comparable})")
    return out


def execute(run, python, repo, data, runs) -> list:
    """The rows of every planned run: those ``--reuse`` holds, the others run now (in plan
    order; each row with the ``commit`` it was made at)."""
    kept, todo = reuse(runs, run.args.reuse) if run.args.reuse else ([], runs)
    if run.args.groups:                         # staged runs (each stage a --reuse of the last)
        todo = [r for r in todo if r["group"] in run.args.groups.split(",")]
    todo = todo[:run.args.limit]
    require_numpy1(python, todo)
    new: list = []
    if todo:
        with tempfile.TemporaryDirectory(prefix="authors-code-") as work:
            code = extract_code(repo, work)
            new = run_driver(python, code, work, data, todo, "authors' code runs")
    commit = C.code_commit()
    by_key: dict = {}
    for r in kept + [{**r, "commit": commit} for r in new]:
        r.pop("seed", None)
        by_key.setdefault(_run_key(r), []).append(r)
    return [r for job in runs for r in by_key.get(_run_key(job), [])]


def main(argv=None) -> int:
    run = C.start("authors_code", __doc__.splitlines()[0], argv, extra=extra_args)
    repo = check_checkout(run.args.authors)
    python = run.args.authors_python
    data = inputs(run, run.quick)
    runs = plan(run, data, run.quick)
    skipped: list = []
    rows = execute(run, python, repo, data, runs)
    C.write_csv(run, rows)
    files = {k: parse_results(results_text(repo, f"{k}.txt"))
             for k in ("gini", "kendall", "duplicate", "kendall_appendix")}
    sizes = {k: len(v) for k, v in data.items()}
    stats = summarize(rows)
    tables = comparisons(stats, files, sizes)
    sections = [
        f"The authors' code at commit `{CODE_COMMIT}` of {REPO_URL} (their results files at "
        f"`{RESULTS_COMMIT}`), run by `experiments/_authors_driver.py` with `{python}` on our "
        "inputs; MSE against their `compute_real_U`. Cells: mean +- s.e. (count). 'file / code': "
        "the results file's mean over the code's MSE. Runs made at: "
        + "; ".join(f"{g}: " + ", ".join(f"{c} ({k})" for c, k in sorted(m.items()))
                    for g, m in group_commits(rows).items()) + "."
        ]
    for g, rows_g in tables.items():
        if not rows_g:
            continue
        sections.append(f"## {TITLES[g]}\n\n" + C.md_table(
            ["setting", "their results file", "their code on our inputs", "file / code",
             EXTRA.get(g, "-")], rows_g))
    parts = error_parts(rows, sizes)
    if parts:
        sections.append(
            "## U-MPC: their error split into its two parts\n\nRuns that recorded their "
            "Laplace draw: `sampling_err` = estimate - noise - their compute_real_U (the "
            "sampled pairs' error), `noise` their draw on the mean.\n\n" + C.md_table(
                ["kernel", "n", "|E|", "epsilon", "runs", "sampling_err^2", "noise^2", "MSE"],
                parts))
    fx = facts(tables, group_commits(rows))
    C.write_markdown(run.path(".md"), "The Sinh-Ramon authors' code on our inputs", run, sections)
    C.write_json(run, [], {"facts": fx, "code_commit": CODE_COMMIT,
                           "results_commit": RESULTS_COMMIT, "skipped": skipped,
                           "error_parts": parts,
                           "tables": {g: [[c if not isinstance(c, float) else float(c)
                                           for c in r] for r in rs]
                                      for g, rs in tables.items()}})
    print(f"[{run.name}] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
