"""Every relative Markdown link of README.md, experiments/README.md and docs/**/*.md points
at a file of the repository, and an anchor into a Markdown file at one of its headings."""

import glob
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def pages():
    out = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "experiments", "README.md")]
    out += sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return [p for p in out if os.path.isfile(p)]


def links(path):
    """(line number, target) of every relative link outside fenced code blocks."""
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), f.read())
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue                    # http:, mailto:, ...; same-page anchors
        yield text.count("\n", 0, m.start()) + 1, target


def slug(heading):
    """GitHub's anchor of a heading."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    return {slug(h) for h in re.findall(r"^#{1,6}\s+(.*?)\s*#*$", text, flags=re.M)}


def test_the_pages_are_found():
    names = {os.path.relpath(p, ROOT) for p in pages()}
    assert {"README.md", os.path.join("docs", "README.md"),
            os.path.join("docs", "guides", "cli.md")} <= names


def test_every_relative_link_resolves():
    broken = []
    for page in pages():
        for line, target in links(page):
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path))
            where = f"{os.path.relpath(page, ROOT)}:{line}: {target}"
            if not os.path.exists(full):
                broken.append(where)
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                broken.append(where + " (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_check_sees_a_broken_link(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("[a](missing.md) `x` [b](https://example.org)\n```\n[c](no.md)\n```\n")
    assert list(links(str(page))) == [(1, "missing.md")]
    assert slug("4. Confidence interval") == "4-confidence-interval"
