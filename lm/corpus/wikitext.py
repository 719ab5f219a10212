"""An article's wikitext -> paragraphs of running prose, by a scanner of the markup.

What is kept and dropped is listed in :mod:`lm.corpus.wikidump`'s docstring. The
scanner works on the whole text with compiled patterns and matches nested markup
(templates, links, tables) with a stack over the markup's delimiters only, so the
Python it runs grows with the markup, not with the prose; the earlier reading
through ``mwparserfromhell``'s tree cost five times the tokenizer's time
(``benchmarks/bench_corpus.py``; docs/corpora.md has the comparison of outputs).

Order matters and follows the parser's: comments and the tags whose content is not
wikitext (``<math>``, ``<ref>``...) first (LaTeX braces are not templates), then
templates (a few inline ones render words), tables, links, external links, bold and
italic, other tags, entities; headings and list items last, on what is left.
"""
from __future__ import annotations

import html
import re
import unicodedata

#: Tags whose content is not prose.
DROP_TAGS = {"ref", "references", "table", "gallery", "math", "chem", "ce", "code", "pre",
             "source", "syntaxhighlight", "score", "timeline", "imagemap", "graph", "mapframe",
             "hiero", "poem", "s", "del", "strike", "templatedata", "categorytree", "inputbox",
             "noinclude", "includeonly", "onlyinclude", "sup"}
#: Sections (lower-cased titles) that hold lists of references, links or works.
DROP_SECTIONS = {
    "references", "notes", "footnotes", "citations", "sources", "bibliography", "further reading",
    "external links", "see also", "works cited", "notes and references", "references and notes",
    "selected works", "works", "discography", "filmography", "publications", "gallery",
    "note", "bibliografia", "collegamenti esterni", "voci correlate", "altri progetti",
    "fonti", "opere", "discografia", "filmografia", "riferimenti", "galleria d'immagini",
    "altre letture", "letture di approfondimento",
}
#: Link prefixes of files and categories in the languages we know; the dump's own
#: namespace names are added per dump.
MEDIA_PREFIXES = frozenset({"file", "image", "media", "category", "immagine", "categoria", "datei",
                  "bild", "kategorie", "fichier", "catégorie", "archivo", "categoría", "imagen",
                  "файл", "категория", "изображение", "קובץ", "קטגוריה", "תמונה", "wikipedia",
                  "wp", "template", "portal", "portale", "aiuto", "help", "wikt", "wiktionary",
                  "commons", "s", "q", "n", "v", "b"})
LANG_LINK = re.compile(r"^[a-z]{2,3}(?:-[a-z]{2,8})*$")
MAGIC = re.compile(r"__[A-Z]+__")
TABLE_LINE = re.compile(r"^\s*(?:\{\||\|\}|\|-|\||!)")
LIST_MARK = "\x00"

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_DROP_TAG = re.compile(
    r"<(%s)(?=[\s/>])[^>]*?(?:/>|>.*?</\1\s*>)" % "|".join(sorted(DROP_TAGS, key=len, reverse=True)),
    re.DOTALL | re.IGNORECASE)
_BRACE_RUN = re.compile(r"\{\{+|\}\}+")
_TABLE_EDGE = re.compile(r"^[ \t]*(\{\||\|\})", re.MULTILINE)
_LINK_EDGE = re.compile(r"\[\[|\]\]")
_EXT_LINK = re.compile(r"\[(?:(?:https?|ftp|ftps|irc|ircs|news|mailto|gopher|nntp|telnet):|//)"
                       r"[^\s\[\]<>\"]*(?:[ \t]+([^\]\n]*))?\]", re.IGNORECASE)
_BARE_URL = re.compile(r"(?<![\w/])(?:https?|ftp)://[^\s\[\]<>\"{}|]*[^\s\[\]<>\"{}|.,;:!?)'’]",
                       re.IGNORECASE)
_STYLE = re.compile(r"'{2,}")
_BR = re.compile(r"<br\s*/?>|</br\s*>", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
_ENTITY = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_HEADING = re.compile(r"^(={1,6})(.+?)(={1,6})[ \t]*$", re.MULTILINE)
_LIST_LINE = re.compile(r"^[*#;:]", re.MULTILINE)
_REF_RESIDUE = re.compile(r"<ref\b[^>]*/>|<ref\b[^>]*>.*?</ref>", re.DOTALL | re.IGNORECASE)
_TEMPLATE_RESIDUE = re.compile(r"\{\{[^{}]*\}\}")
_EMPTY_PARENS = re.compile(r"\(\s*(?:[,;:]\s*)*\)")
_PARENS_LEAD = re.compile(r"\(\s*(?:[,;:]\s*)+")
#: Inline templates that render words: name -> which positional arguments, joined by a space.
_RENDERED = {"lang": (1,), "lingue": (1,), "lingua": (1,), "convert": (0, 1), "cvt": (0, 1),
             **{name: (0,) for name in ("nowrap", "nobr", "small", "smaller", "big", "sic", "not a typo",
                                         "as written", "ill", "interlanguage link")}}


def wikitext_to_paragraphs(wikitext: str, media_prefixes: frozenset[str] = MEDIA_PREFIXES) -> list[str]:
    """Plain-text paragraphs of running prose in an article's wikitext. Whitespace
    inside a paragraph is normalised to single spaces; text is NFC-normalised."""
    text = _DROP_TAG.sub("", _COMMENT.sub("", wikitext))
    text = _inline(_tables(_templates(text, media_prefixes)), media_prefixes)
    text = _LIST_LINE.sub(LIST_MARK, text)
    text = unicodedata.normalize("NFC", MAGIC.sub("", _sections(text)))
    text = _REF_RESIDUE.sub("", text)
    while (cleaned := _TEMPLATE_RESIDUE.sub("", text)) != text:
        text = cleaned
    paragraphs, lines = [], []
    for line in text.split("\n"):
        if not line.strip() or line.startswith(LIST_MARK) or TABLE_LINE.match(line) \
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


def _inline(text: str, media: frozenset[str]) -> str:
    """Links, external links, bold/italic, tags and entities of text without templates."""
    text = _links(text, media)
    text = _BARE_URL.sub("", _EXT_LINK.sub(lambda m: m.group(1) or "", text))
    text = _TAG.sub("", _BR.sub(" ", _STYLE.sub("", text)))
    return _ENTITY.sub(_entity, text) if "&" in text else text


def _entity(m: re.Match) -> str:
    name = m.group(1)
    if name[0] != "#":
        return html.entities.html5.get(name + ";", m.group())
    try:
        cp = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
        return chr(cp) if 0 < cp < 0x110000 else m.group()
    except ValueError:
        return m.group()


def _templates(text: str, media: frozenset[str]) -> str:
    """Templates and template arguments dropped, outermost first; the few inline
    templates of :data:`_RENDERED` replaced by their words. Unclosed braces stay
    (the lines holding them are dropped later)."""
    if "{{" not in text:
        return text
    out, last, stack, start = [], 0, [], 0
    for m in _BRACE_RUN.finditer(text):
        run = len(m.group())
        if m.group()[0] == "{":
            if not stack:
                start = m.start()
            stack.extend([3] + [2] * ((run - 3) // 2) if run % 2 else [2] * (run // 2))
            continue
        while run >= 2 and stack:
            run -= min(stack.pop(), run)
            if not stack:
                out.append(text[last:start])
                out.append(_template_text(text[start + 2:m.end() - run - 2], media))
                last = m.end() - run
                break
    out.append(text[last:])  # unclosed braces stay as they are
    return "".join(out)


def _template_text(inner: str, media: frozenset[str]) -> str:
    """The words an inline template renders; nothing for every other one (and for
    template arguments, ``{{{1}}}``, whose inner text starts with a brace)."""
    name = inner.split("|", 1)[0].strip().lower().replace("_", " ")
    if name.startswith("formatnum:"):  # its number, which may come from a nested template
        return _templates(_split_params(inner)[0].split(":", 1)[1], media).strip().lower()
    wanted = _RENDERED.get(name)
    if wanted is None or inner.startswith("{"):
        return ""
    positional = [p for p in _split_params(inner)[1:] if "=" not in p]

    def arg(i: int) -> str:
        return _inline(_templates(positional[i], media), media).strip() if len(positional) > i else ""

    return " ".join(arg(i) for i in wanted).strip()


def _split_params(inner: str) -> list[str]:
    """A template's inner text cut at the pipes outside nested templates and links."""
    parts, depth, last = [], 0, 0
    for m in re.finditer(r"\{\{|\}\}|\[\[|\]\]|\|", inner):
        tok = m.group()
        if tok in ("{{", "[["):
            depth += 1
        elif tok in ("}}", "]]"):
            depth = max(depth - 1, 0)
        elif depth == 0:
            parts.append(inner[last:m.start()])
            last = m.end()
    parts.append(inner[last:])
    return parts


def _tables(text: str) -> str:
    """``{| ... |}`` tables (nested too) dropped; an unclosed one runs to the end."""
    if "{|" not in text:
        return text
    out, last, depth, start = [], 0, 0, 0
    for m in _TABLE_EDGE.finditer(text):
        if m.group(1) == "{|":
            if depth == 0:
                start = m.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                out.append(text[last:start])
                last = m.end()
    out.append(text[last:] if depth == 0 else text[last:start])
    return "".join(out)


def _links(text: str, media: frozenset[str]) -> str:
    """``[[target|label]]`` -> label, ``[[target]]`` -> target; files, categories and
    interlanguage links dropped with their captions (nested links too)."""
    if "[[" not in text:
        return text
    out, last, stack = [], 0, []
    for m in _LINK_EDGE.finditer(text):
        if m.group() == "[[":
            stack.append(m.start())
        elif stack:
            start = stack.pop()
            if not stack:
                out.append(text[last:start])
                out.append(_link_text(text[start + 2:m.start()], media))
                last = m.end()
    out.append(text[last:])
    return "".join(out)


def _link_text(inner: str, media: frozenset[str]) -> str:
    title, bar, label = inner.partition("|")
    title = title.strip()
    prefix, colon, _ = title.partition(":")
    prefix = prefix.strip().lower()
    if colon and (prefix in media or LANG_LINK.match(prefix) or not prefix):
        return ""  # file, category, interlanguage or interwiki link
    if bar:
        return _links(label, media)
    return title.split("#")[0] or title


def _sections(text: str) -> str:
    """Headings replaced by paragraph breaks; the sections of :data:`DROP_SECTIONS`
    (references, external links...) dropped with their subsections."""
    if "=" not in text:
        return text
    out, last, skip_level = [], 0, 0
    for m in _HEADING.finditer(text):
        left, right = len(m.group(1)), len(m.group(3))
        level = min(left, right)
        title = ("=" * (left - level) + m.group(2) + "=" * (right - level)).strip().lower()
        if not skip_level:
            out.append(text[last:m.start()])
        last = m.end()
        if skip_level and level > skip_level:
            continue
        skip_level = level if title in DROP_SECTIONS else 0
        out.append("\n\n")
    if not skip_level:
        out.append(text[last:])
    return "".join(out)
