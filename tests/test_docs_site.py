"""The documentation site (mkdocs.yml, docs/) and the README say what the CLI does: every
`agree ...` command line they show parses (its command, options and choices exist), every
command's --help is on a page, the examples marked ``<!-- runs -->`` run as written on the
real data, the README's links lead somewhere, and ``mkdocs build --strict`` passes."""
from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from agreement.cli import cli
from conftest import ROOT, SHARED_DATA

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
RUNS = re.compile(r"^<!-- runs -->\n```\w*\n(.*?)^```", re.S | re.M)
#: Fenced blocks that hold no shell commands.
NOT_SHELL = {"python", "text", "json", "yaml", "toml", "bibtex"}


def _hooks():
    """scripts/mkdocs_hooks.py, the site's build hook (not a package: loaded by path)."""
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HELP_MARKER = _hooks().HELP_MARKER


def shell_lines(text: str) -> list[str]:
    """The logical lines (``\\`` continuations joined) of the shell blocks of a page."""
    lines = []
    for lang, body in FENCE.findall(text):
        if lang not in NOT_SHELL:
            lines += [line for line in body.replace("\\\n", " ").splitlines() if line.strip()]
    return lines


def agree_commands(line: str) -> list[list[str]]:
    """The argument lists of the `agree` commands on one shell line (after `&&`, `|`, `;`,
    environment assignments; `torchrun ... -m agreement.cli` counts as agree); comments
    dropped. A line that is not shell (a table, a message) gives none."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return []
    commands, current = [], []
    for word in [*words, ";"]:
        if word in ("&&", "||", "|", ";"):
            commands.append(current)
            current = []
        else:
            current.append(word)
    found = []
    for words in commands:
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            words = words[1:]
        if words[:1] == ["agree"]:
            found.append(words[1:])
        elif words[:1] == ["torchrun"] and "agreement.cli" in words:
            found.append(words[words.index("agreement.cli") + 1:])
    return found


def inline_commands(text: str) -> list[list[str]]:
    """`agree CMD ...` written inline in the prose (``agree score --curve``)."""
    spans = re.findall(r"`(agree [a-z][^`]*)`", FENCE.sub("", text))
    return [cmd for span in spans for cmd in agree_commands(span.replace("\n", " "))]


def resolve(args: list[str]) -> tuple[click.Command | None, list[str], str | None]:
    """The command `agree ARGS` names, the words after it, and why there is none."""
    cmd, words = cli, list(args)
    while isinstance(cmd, click.Group):
        if not words or words[0] in ("--help", "-h", "--version"):
            return None, [], None
        sub = cmd.get_command(click.Context(cmd), words[0])
        if sub is None:
            return None, [], f"no command {words[0]!r}"
        cmd, words = sub, words[1:]
    return cmd, words, None


def parse_problem(args: list[str]) -> str | None:
    """Why `agree ARGS` would not parse (an unknown command, option or choice, a missing
    option value, a value of the wrong type, an extra argument), or None. Paths are not
    looked up and required arguments may be left out: the docs show placeholders."""
    cmd, words, problem = resolve(args)
    if cmd is None:
        return problem
    ctx = click.Context(cmd, info_name=cmd.name)
    try:
        opts, rest, given = cmd.make_parser(ctx).parse_args(args=words)
    except click.UsageError as error:
        return error.format_message()
    if rest and not ctx.allow_extra_args:
        return f"unexpected arguments {rest}"
    for param in given:
        value = opts.get(param.name)
        if isinstance(param.type, (click.Path, click.File)) or not isinstance(value, (str, list, tuple)):
            continue
        try:
            param.type_cast_value(ctx, value)
        except click.BadParameter as error:
            return f"{param.opts[0]}: {error.format_message()}"
    return None


def names_problem(args: list[str]) -> str | None:
    """For a command named in prose (`agree score --curve`, `agree train-lm --arch kn5`):
    the command and every option it names exist."""
    cmd, words, problem = resolve(args)
    if cmd is None:
        return problem
    known = {opt for param in cmd.get_params(click.Context(cmd)) for opt in (*param.opts, *param.secondary_opts)}
    unknown = [w for w in words if w.startswith("-") and w.split("=")[0] not in known]
    return f"no option {unknown}" if unknown else None


def documented_commands(inline: bool = False) -> list[tuple[str, list[str]]]:
    """(page, args) of every `agree` command of the README and the pages: in their shell
    blocks, or (``inline``) named in their prose."""
    found = []
    for path in [README, *PAGES]:
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT))
        commands = inline_commands(text) if inline else [a for line in shell_lines(text) for a in agree_commands(line)]
        found += [(name, args) for args in commands]
    return found


def leaf_commands(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    leaves = []
    for name in group.list_commands(click.Context(group)):
        sub = group.get_command(click.Context(group), name)
        if isinstance(sub, click.Group):
            leaves += leaf_commands(sub, (*prefix, name))
        else:
            leaves.append((*prefix, name))
    return leaves


def test_the_docs_show_many_command_lines_and_the_parser_catches_a_wrong_one():
    commands = documented_commands()
    assert len(commands) > 40 and len(documented_commands(inline=True)) > 60
    assert {args[0] for _, args in commands if args} >= {"extract", "nonce", "score", "train-lm"}
    assert "--modell" in parse_problem(["score", "x", "--modell", "m"])
    assert "sentance" in parse_problem(["score", "x", "--method", "sentance"])
    assert "no command" in parse_problem(["scour", "x"])
    assert parse_problem(["score", "../a", "--model", "en-lstm", "--method", "sentence", "--out", "o"]) is None
    assert names_problem(["train-lm", "--snapshot-every"]) is None
    assert "--snapshot" in names_problem(["train-lm", "--snapshot"])


def test_every_agree_command_line_in_the_docs_parses():
    problems = [f"{name}: agree {shlex.join(args)}: {problem}"
                for name, args in documented_commands() if (problem := parse_problem(args))]
    assert not problems, "\n".join(problems)


def test_every_command_and_option_named_in_the_prose_exists():
    """A whole command line in the prose (one with --out: the tables' examples) parses;
    a fragment (`agree train-lm --snapshot-every`) names a command and options that exist."""
    check = lambda args: parse_problem(args) if "--out" in args else names_problem(args)
    problems = [f"{name}: agree {shlex.join(args)}: {problem}"
                for name, args in documented_commands(inline=True) if (problem := check(args))]
    assert not problems, "\n".join(problems)


def test_every_command_has_its_help_on_a_page():
    """A page shows a command's --help through a ``<!-- help: CMD -->`` marker (rendered at
    build time, scripts/mkdocs_hooks.py) or tells the reader to run `agree CMD --help`."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
    shown = set(HELP_MARKER.findall(text))
    missing = [" ".join(c) for c in leaf_commands()
               if " ".join(c) not in shown and f"agree {' '.join(c)} --help" not in text]
    assert not missing, f"add `<!-- help: CMD -->` to the command's page for: {missing}"


def test_help_markers_become_the_cli_help():
    hooks = _hooks()
    page = (DOCS / "commands" / "setup-doctor.md").read_text(encoding="utf-8")
    rendered = hooks.render_help_markers(page)
    assert "<!-- help:" not in rendered
    for words in HELP_MARKER.findall(page):
        assert f"```text\n{hooks.help_text(words.split())}```" in rendered
    assert "Usage: agree setup kenlm [OPTIONS]" in rendered
    with pytest.raises(ValueError, match="agree scour --help"):
        hooks.render_help_markers("<!-- help: scour -->\n")


def nav_pages() -> list[Path]:
    """The pages in the order of mkdocs.yml's nav."""
    names = re.findall(r"^\s*- (?:[^\n]*?: )?([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    return [DOCS / name for name in names]


def test_the_nav_holds_every_page_once():
    """(mkdocs build --strict fails on a page left out of the nav too: validation.omitted_files.)"""
    listed = nav_pages()
    assert len(listed) == len(set(listed)) and sorted(listed) == PAGES


@pytest.mark.integration
@pytest.mark.slow
def test_the_examples_marked_runs_run_as_written(tmp_path):
    """Every block after ``<!-- runs -->``, page after page in the nav's order, in one
    directory (later pages use what earlier ones made, as a reader would), `agree` being
    this checkout; each --out it names is then a finished output with a manifest."""
    if not (SHARED_DATA / "ud" / "en_ewt").is_dir():
        pytest.skip(f"real data not available: {SHARED_DATA / 'ud' / 'en_ewt'} is absent")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "agree").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agreement.cli "$@"\n')
    (bin_dir / "agree").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT)}
    blocks = [(page, body) for page in nav_pages() for body in RUNS.findall(page.read_text(encoding="utf-8"))]
    assert len(blocks) >= 10
    for page, body in blocks:
        script = body.replace("../shared/data", str(SHARED_DATA))
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                                capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, f"{page.relative_to(ROOT)}:\n{body}\n{result.stderr[-2000:]}"
        for out in re.findall(r"--out (\S+)", body):
            assert (work / out / "manifest.json").is_file(), f"{page.relative_to(ROOT)}: {out}"


def github_slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_is_a_newcomers_page_whose_links_lead_somewhere():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    assert text.splitlines()[3].startswith("make demo") and text.splitlines()[4].startswith("make test")
    links = re.findall(r"\]\(((?!https?:)[^)#\s]+)(?:#([^)\s]+))?\)", text)
    assert len(links) > 20
    for target, anchor in links:
        path = ROOT / target
        assert path.exists(), target
        if anchor:
            headings = re.findall(r"^#+ (.*)$", path.read_text(encoding="utf-8"), re.M)
            assert anchor in {github_slug(h) for h in headings}, f"{target}#{anchor}"


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    score = (tmp_path / "site" / "commands" / "score.html").read_text(encoding="utf-8")
    assert "Usage: agree score [OPTIONS]" in score
