"""Articles of a MediaWiki XML dump as plain-text paragraphs.

Reading: ``mwxml`` streams the dump page by page (constant memory on a 20 GB
file); ``.bz2`` files are decompressed on the fly by Python's ``bz2`` module,
which reads multistream files (``pages-articles-multistream.xml.bz2``, many
concatenated bz2 streams) as one. Only articles are kept: namespace 0, not a
redirect; of a page with several revisions, the last one.

Cleaning: ``mwparserfromhell`` parses the wikitext into nodes, and
:func:`wikitext_to_paragraphs` keeps running prose only:

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

import bz2
import gzip
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator
from xml.etree.ElementTree import ParseError

import mwparserfromhell as mwp
import mwxml
from mwparserfromhell.nodes import (Argument, Comment, ExternalLink, Heading, HTMLEntity, Tag,
                                    Template, Text, Wikilink)

from lm.errors import LMError

#: Tags whose content is not prose.
_DROP_TAGS = {"ref", "references", "table", "gallery", "math", "chem", "ce", "code", "pre",
              "source", "syntaxhighlight", "score", "timeline", "imagemap", "graph", "mapframe",
              "hiero", "poem", "s", "del", "strike", "templatedata", "categorytree", "inputbox",
              "noinclude", "includeonly", "onlyinclude", "sup"}
_LIST_TAGS = {"li", "dt", "dd"}
#: Sections (lower-cased titles) that hold lists of references, links or works.
_DROP_SECTIONS = {
    "references", "notes", "footnotes", "citations", "sources", "bibliography", "further reading",
    "external links", "see also", "works cited", "notes and references", "references and notes",
    "selected works", "works", "discography", "filmography", "publications", "gallery",
    "note", "bibliografia", "collegamenti esterni", "voci correlate", "altri progetti",
    "fonti", "opere", "discografia", "filmografia", "riferimenti", "galleria d'immagini",
    "altre letture", "letture di approfondimento",
}
#: Link prefixes of files and categories in the languages we know; the dump's own
#: namespace names are added per dump.
_MEDIA_PREFIXES = frozenset({"file", "image", "media", "category", "immagine", "categoria", "datei",
                   "bild", "kategorie", "fichier", "catégorie", "archivo", "categoría", "imagen",
                   "файл", "категория", "изображение", "קובץ", "קטגוריה", "תמונה", "wikipedia",
                   "wp", "template", "portal", "portale", "aiuto", "help", "wikt", "wiktionary",
                   "commons", "s", "q", "n", "v", "b"})
_LANG_LINK = re.compile(r"^[a-z]{2,3}(?:-[a-z]{2,8})*$")
_REDIRECT = re.compile(r"^\s*#\s*(?:redirect|rinvia|rimanda|weiterleitung|redirection|"
                       r"redirección|перенаправление|הפניה)\b", re.IGNORECASE)
_MAGIC = re.compile(r"__[A-Z]+__")
_TABLE_LINE = re.compile(r"^\s*(?:\{\||\|\}|\|-|\||!)")
_LIST_MARK = "\x00"
#: Template source the parser left as text (it gives up on some malformed
#: infoboxes); applied repeatedly, innermost first.
_TEMPLATE_RESIDUE = re.compile(r"\{\{[^{}]*\}\}")
#: <ref> markup that reached the text through HTML entities (&lt;ref&gt;).
_REF_RESIDUE = re.compile(r"<ref\b[^>]*/>|<ref\b[^>]*>.*?</ref>", re.DOTALL | re.IGNORECASE)
#: Parentheses emptied by dropped templates: "( ; ; born 1954 )" -> "(born 1954 )".
_EMPTY_PARENS = re.compile(r"\(\s*(?:[,;:]\s*)*\)")
_PARENS_LEAD = re.compile(r"\(\s*(?:[,;:]\s*)+")


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
    link_prefixes: frozenset = _MEDIA_PREFIXES


def open_binary(path: Path) -> tuple[BinaryIO, BinaryIO]:
    """Open ``path`` for reading, decompressing bz2 (multistream too) or gzip by
    content, not by name. Returns (decompressed stream, raw file) so that callers
    can report progress as ``raw.tell()`` against the file size."""
    path = Path(path)
    if not path.exists():
        raise LMError(f"{path}: no such file")
    if path.is_dir():
        raise LMError(f"{path}: is a directory, not a dump or text file")
    raw = open(path, "rb")
    magic = raw.read(3)
    raw.seek(0)
    if magic == b"BZh":
        return bz2.BZ2File(raw), raw
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw), raw
    return raw, raw


def is_dump(path: Path) -> bool:
    """Whether ``path`` is an XML file (a dump, or an XML file that should be one)
    rather than plain text: it starts with ``<?xml`` or ``<mediawiki``, or its
    name says ``.xml``."""
    stream, raw = open_binary(path)
    try:
        head = stream.read(512)
    except EOFError:
        raise LMError(f"{path}: the compressed file is truncated (it ends inside its first "
                      "block); the download is probably incomplete, download it again") from None
    except OSError as e:
        raise LMError(f"{path}: corrupt compressed file ({e})") from None
    finally:
        raw.close()
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith((b"<?xml", b"<mediawiki")) or ".xml" in Path(path).name.lower()


def iter_pages(path: Path, *, on_page: Callable[[int], None] | None = None) -> Iterator[Page]:
    """Stream the articles of a MediaWiki dump.

    ``on_page(compressed_bytes_read)`` is called after every page read (articles
    or not) for progress reporting. Raises :class:`LMError` for a missing file,
    a file that is not a MediaWiki dump, or a truncated or corrupt one.
    """
    path = Path(path)
    stream, raw = open_binary(path)
    pages = 0
    try:
        try:
            dump = mwxml.Dump.from_file(stream)
        except (AssertionError, mwxml.errors.MalformedXML):
            raise LMError(f"{path}: not a MediaWiki XML dump (its root element is not "
                          "<mediawiki>)") from None
        media = set(_MEDIA_PREFIXES)
        for ns in dump.site_info.namespaces or ():
            if ns.id in (6, 14) and ns.name:  # File, Category in the wiki's language
                media.add(ns.name.lower())
        media = frozenset(media)
        for page in dump:
            text = None
            for revision in page:
                text = revision.text
            pages += 1
            if on_page is not None:
                on_page(raw.tell())
            if page.namespace != 0 or page.redirect or not text or _REDIRECT.match(text):
                continue
            yield Page(title=page.title or "", page_id=page.id or 0, wikitext=text,
                       link_prefixes=media)
    except EOFError:
        raise LMError(f"{path}: the compressed file is truncated (it ends after {pages} pages); "
                      "the download is probably incomplete, download it again") from None
    except ParseError as e:
        raise LMError(f"{path}: malformed or truncated XML after {pages} pages ({e})") from None
    except mwxml.errors.MalformedXML as e:
        raise LMError(f"{path}: malformed MediaWiki dump after {pages} pages ({e})") from None
    except OSError as e:  # bz2/gzip: invalid data stream
        raise LMError(f"{path}: corrupt compressed file after {pages} pages ({e})") from None
    finally:
        raw.close()


def wikitext_to_paragraphs(wikitext: str, media_prefixes: frozenset[str] = _MEDIA_PREFIXES) -> list[str]:
    """Plain-text paragraphs of running prose in an article's wikitext (see the
    module docstring for what is kept). Whitespace inside a paragraph is
    normalised to single spaces; text is NFC-normalised."""
    media = media_prefixes
    code = mwp.parse(wikitext, skip_style_tags=False)
    parts: list[str] = []
    skip_level = 0  # > 0: inside a dropped section of that heading level
    for node in code.nodes:
        if isinstance(node, Heading):
            title = _plain(node.title, media).strip().lower()
            if skip_level and node.level > skip_level:
                continue
            skip_level = node.level if title in _DROP_SECTIONS else 0
            parts.append("\n\n")
            continue
        if not skip_level:
            _render(node, parts, media)
    text = unicodedata.normalize("NFC", _MAGIC.sub("", "".join(parts)))
    text = _REF_RESIDUE.sub("", text)
    while (cleaned := _TEMPLATE_RESIDUE.sub("", text)) != text:
        text = cleaned
    paragraphs, lines = [], []
    for line in text.split("\n"):
        if not line.strip() or line.startswith(_LIST_MARK) or _TABLE_LINE.match(line) \
                or "{{" in line or "}}" in line:
            _flush(lines, paragraphs)  # a blank line, list item or table row ends a paragraph
            continue
        lines.append(line)
    _flush(lines, paragraphs)
    return paragraphs


def _flush(lines: list[str], paragraphs: list[str]) -> None:
    if lines:
        para = " ".join(" ".join(lines).split())
        para = _PARENS_LEAD.sub("(", _EMPTY_PARENS.sub("", para))
        if para:
            paragraphs.append(para)
        lines.clear()


def _plain(code, media: frozenset[str]) -> str:
    parts: list[str] = []
    for node in code.nodes:
        _render(node, parts, media)
    return "".join(parts)


def _render(node, parts: list[str], media: frozenset[str]) -> None:
    """Append the prose of one node to ``parts``."""
    if isinstance(node, Text):
        parts.append(node.value)
    elif isinstance(node, Wikilink):
        title = str(node.title).strip()
        prefix, colon, _ = title.partition(":")
        prefix = prefix.strip().lower()
        if colon and (prefix in media or _LANG_LINK.match(prefix) or not prefix):
            return  # file, category, interlanguage or interwiki link
        if node.text is not None:
            parts.append(_plain(node.text, media))
        else:
            parts.append(title.split("#")[0] or title)
    elif isinstance(node, Tag):
        tag = str(node.tag).lower().strip()
        if tag in _LIST_TAGS and node.wiki_markup:
            parts.append("\n" + _LIST_MARK)
        elif tag == "br":
            parts.append(" ")
        elif tag not in _DROP_TAGS and node.contents is not None:
            parts.append(_plain(node.contents, media))
    elif isinstance(node, Template):
        parts.append(_template_text(node, media))
    elif isinstance(node, ExternalLink):
        if node.title is not None:
            parts.append(_plain(node.title, media))
    elif isinstance(node, HTMLEntity):
        parts.append(node.normalize())
    elif isinstance(node, (Comment, Argument, Heading)):
        return


def _template_text(node: Template, media: frozenset[str]) -> str:
    """The words a few inline templates render; nothing for every other one."""
    name = str(node.name).strip().lower().replace("_", " ")
    positional = [p for p in node.params if not p.showkey]

    def arg(i: int) -> str:
        return _plain(positional[i].value, media).strip() if len(positional) > i else ""

    if name in ("lang", "lingue", "lingua"):
        return arg(1)
    if name in ("nowrap", "nobr", "small", "smaller", "big", "sic", "not a typo", "as written",
                "ill", "interlanguage link"):
        return arg(0)
    if name in ("convert", "cvt"):
        return f"{arg(0)} {arg(1)}".strip()
    if name.startswith("formatnum:"):
        return name.split(":", 1)[1]
    return ""


def page_paragraphs(page: Page) -> list[str]:
    """The prose paragraphs of one :class:`Page`."""
    return wikitext_to_paragraphs(page.wikitext, page.link_prefixes)

