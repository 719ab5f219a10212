"""Articles of a MediaWiki XML dump as plain-text paragraphs.

Reading: :mod:`lm.corpus.dumpread` finds the pages in the decompressed text (bz2,
multistream too, or gzip, told by content), in ranges that worker processes read on
their own (:mod:`lm.corpus.ranges`). Only articles are kept: namespace 0, not a
redirect; of a page with several revisions, the last one.

Cleaning: :func:`wikitext_to_paragraphs` (:mod:`lm.corpus.wikitext`, a scanner of the
markup) keeps running prose only:

- dropped: templates (infoboxes, citations, navigation boxes; a few inline ones
  that render words, such as ``{{lang|de|Mauer}}`` or ``{{convert|5|km}}``,
  keep those words), tables, ``<ref>`` and other non-prose tags (math, code,
  galleries, superscripts), comments, files/images, categories,
  interlanguage links, bare URLs, headings, list items (bulleted, numbered,
  definition lists: rarely whole sentences), table rows, template source that
  the parser could not parse (a malformed infobox), and the whole of the
  sections that are lists of references or links ("References", "External
  links", "Note", ...); parentheses emptied by dropped templates are removed;
- kept: the text of links (``[[capital city|capital]]`` -> ``capital``), of
  bold/italic and formatting tags, of external links with a label; HTML
  entities decoded.

Truncated input (an interrupted download: a ``.bz2`` without its end-of-stream
marker, or XML that stops mid-page) is an error, not a best effort: a silently
shorter corpus would change every figure computed on it. The error says where
it stopped so the user can re-download.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from lm.corpus.dumpread import articles, blocks, is_dump, open_binary, read_header  # noqa: F401
from lm.corpus.wikitext import MEDIA_PREFIXES, wikitext_to_paragraphs  # noqa: F401  (handed on)


@dataclass(frozen=True)
class Page:
    """One article of a dump.

    title: page title; page_id: the dump's page id; wikitext: the source of its
    last revision; link_prefixes: lower-cased link prefixes whose links are
    dropped (files, categories: ours plus the dump's own namespace names).
    """
    title: str
    page_id: int
    wikitext: str
    link_prefixes: frozenset = MEDIA_PREFIXES


def iter_pages(path: Path) -> Iterator[Page]:
    """Stream the articles of a MediaWiki dump, in order, in this process. Raises
    :class:`LMError` for a missing file, a file that is not a MediaWiki dump, or a
    truncated or corrupt one."""
    path = Path(path)
    media = read_header(path).media
    for text, _ in blocks(path):
        for article in articles(text, path):
            if article is not None:
                yield Page(title=article.title, page_id=article.page_id, wikitext=article.wikitext,
                           link_prefixes=media)


def page_paragraphs(page: Page) -> list[str]:
    """The prose paragraphs of one :class:`Page`."""
    return wikitext_to_paragraphs(page.wikitext, page.link_prefixes)
