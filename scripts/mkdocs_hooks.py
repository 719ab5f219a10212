"""MkDocs hooks of the documentation site (mkdocs.yml, ``hooks:``).

A command page holds ``<!-- help: score -->`` where the command's options belong; at build
time the marker becomes ``agree score --help`` exactly as the CLI of this checkout prints
it, so a page never shows a stale or made-up option list (tests/test_docs_site.py checks
that every command has such a marker). On GitHub the marker is an invisible comment.
"""
from __future__ import annotations

import re

from click.testing import CliRunner

from agreement.cli import cli

HELP_MARKER = re.compile(r"^<!-- help: ([a-z][a-z -]*?) -->$", re.M)
#: The width the help is wrapped at: what a code block of the site shows without scrolling at
#: a 1280-pixel window (click would take the terminal's).
HELP_WIDTH = 72


def help_text(words: list[str]) -> str:
    """``agree WORDS... --help`` as the CLI prints it; a command that does not exist is an
    error (a strict build fails rather than show a missing command's help)."""
    result = CliRunner().invoke(cli, [*words, "--help"], prog_name="agree", terminal_width=HELP_WIDTH)
    if result.exit_code != 0 or not result.output.startswith("Usage: agree"):
        raise ValueError(f"agree {' '.join(words)} --help failed: {result.output.strip()[:200]}")
    return result.output


def render_help_markers(markdown: str) -> str:
    """Each ``<!-- help: WORDS -->`` line replaced by a text block of that command's --help."""
    return HELP_MARKER.sub(lambda m: f"```text\n{help_text(m.group(1).split())}```", markdown)


def on_page_markdown(markdown: str, **_kwargs) -> str:
    return render_help_markers(markdown)
