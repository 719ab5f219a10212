"""A MediaWiki dump cut into ranges that worker processes read on their own.

* A **multistream** dump (``*-multistream.xml.bz2``) is a series of bz2 streams of 100
  pages each, and its index (``*-multistream-index.txt.bz2``: ``offset:page_id:title``
  lines) says where each stream starts: a range is a run of whole streams of about
  :data:`RANGE_BYTES` compressed bytes, and each worker seeks to its range and
  decompresses it. The index is checked against the dump (every offset starts a bz2
  stream inside the file; each range's first page has the index's id).
* Any other dump (plain ``.xml.bz2``, ``.xml.gz``, ``.xml``) is decompressed once, in
  order, and cut at page ends into blocks of about :data:`BLOCK_CHARS` characters,
  which travel to the workers as text.

Ranges depend on the dump only, never on the number of workers, so that the corpus
is the same whatever that number. Pages are found by the dump's regular layout (one
``<page>`` element after another, the text XML-escaped), which is what a MediaWiki
export writes, rather than by an XML parser: the parser cost more than the wikitext.
"""
from __future__ import annotations

import bz2
import gzip
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from lm.corpus.wikitext import MEDIA_PREFIXES
from lm.errors import LMError

#: compressed bytes of a multistream range (about 1.5 M words of English prose)
RANGE_BYTES = 2 << 20
#: decompressed characters of a block of a dump read in order
BLOCK_CHARS = 8 << 20
#: the most text read in search of a page's end (MediaWiki's pages stop at 2 MB)
MAX_PAGE_BYTES = 256 << 20
_PAGE = re.compile(r"<page>(.*?)</page>", re.DOTALL)
_TITLE = re.compile(r"<title>([^<]*)</title>")
_NS = re.compile(r"<ns>(-?\d+)</ns>")
_ID = re.compile(r"<id>(\d+)</id>")
_TEXT = re.compile(r"<text\b[^>]*?(?:/>|>(.*?)</text>)", re.DOTALL)
_ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_NAMESPACE = re.compile(r'<namespace key="(-?\d+)"[^>]*>([^<]*)</namespace>')
_ROOT_LANG = re.compile(r'<mediawiki\b[^>]*\bxml:lang="([^"]+)"')
_DBNAME = re.compile(r"<dbname>([a-z_-]+?)wiki</dbname>")
_REDIRECT = re.compile(r"^\s*#\s*(?:redirect|rinvia|rimanda|weiterleitung|redirection|"
                       r"redirección|перенаправление|הפניה)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Header:
    """What a dump's ``<siteinfo>`` says: its language (``xml:lang``, else the
    database name's prefix; "" when neither) and the link prefixes to drop (ours plus
    the dump's own names of the File and Category namespaces)."""
    lang: str
    media: frozenset


@dataclass(frozen=True)
class Article:
    """One article (namespace 0, not a redirect): its title, page id and wikitext."""
    title: str
    page_id: int
    wikitext: str


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


def _read_head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of ``path``'s (decompressed) text; a truncated or corrupt
    compressed file is one :class:`LMError`."""
    stream, raw = open_binary(path)
    try:
        return stream.read(size)
    except EOFError:
        raise LMError(f"{path}: the compressed file is truncated (it ends inside its first block); "
                      "the download is probably incomplete, download it again") from None
    except OSError as e:
        raise LMError(f"{path}: corrupt compressed file ({e})") from None
    finally:
        raw.close()


def is_dump(path: Path) -> bool:
    """Whether ``path`` is an XML file (a dump, or an XML file that should be one)
    rather than plain text: it starts with ``<?xml`` or ``<mediawiki``, or its
    name says ``.xml``."""
    head = _read_head(path, 512)
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith((b"<?xml", b"<mediawiki")) or ".xml" in Path(path).name.lower()


def read_header(path: Path) -> Header:
    """The ``<siteinfo>`` of a dump (its first 64 KB of text)."""
    head = _read_head(path, 1 << 16).decode("utf-8", errors="replace")
    if "<mediawiki" not in head:
        raise LMError(f"{path}: not a MediaWiki XML dump (its root element is not <mediawiki>)")
    head = head.split("</siteinfo>", 1)[0]
    media = set(MEDIA_PREFIXES)
    for key, name in _NAMESPACE.findall(head):
        if key in ("6", "14") and name.strip():
            media.add(_unescape(name.strip()).lower())
    lang = (m.group(1) if (m := _ROOT_LANG.search(head)) else
            m.group(1) if (m := _DBNAME.search(head)) else "")
    return Header(lang=lang.lower().split("-")[0], media=frozenset(media))


def index_path(path: Path) -> Path | None:
    """The multistream index beside ``path`` (Wikipedia's naming), or None."""
    name = path.name
    if "multistream" not in name or not name.endswith(".xml.bz2"):
        return None
    candidate = path.with_name(name[:-len(".xml.bz2")] + "-index.txt.bz2")
    return candidate if candidate.is_file() else None


def stream_ranges(path: Path, index: Path) -> list[tuple[int, int, int]]:
    """(start, end, first page id) of each range of whole streams, from the index;
    :class:`LMError` when the index does not match the dump."""
    size = path.stat().st_size
    starts: dict[int, int] = {}
    try:
        with bz2.open(index, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                off, sep, rest = line.partition(":")
                pid = rest.partition(":")[0]
                if not sep or not off.isdigit() or not pid.isdigit():
                    raise LMError(f"{index}:{lineno}: not a multistream index line (offset:page_id:title)")
                starts.setdefault(int(off), int(pid))
    except (EOFError, OSError, UnicodeDecodeError) as e:
        raise LMError(f"{index}: unreadable multistream index ({e})") from None
    offsets = sorted(starts)
    if not offsets:
        raise LMError(f"{index}: empty multistream index")
    if offsets[-1] >= size:
        raise LMError(f"{path}: the compressed file is truncated, or {index.name} is another dump's index "
                      f"(it names a stream at byte {offsets[-1]}, the file has {size} bytes); download it again")
    with open(path, "rb") as fh:
        for off in offsets:
            fh.seek(off)
            if not re.match(rb"BZh[1-9]1AY&SY", fh.read(10)):
                raise LMError(f"{index}: does not match {path.name} (offset {off} does not start a "
                              f"bz2 stream in the dump); the index of another dump?")
    end_of_pages = _last_stream(path, offsets[-1], size)
    ranges, first = [], 0
    bounds = offsets + [end_of_pages]
    for i in range(1, len(bounds)):
        if bounds[i] - bounds[first] >= RANGE_BYTES or i == len(bounds) - 1:
            ranges.append((bounds[first], bounds[i], starts[bounds[first]]))
            first = i
    return ranges


def _last_stream(path: Path, last: int, size: int) -> int:
    """Where the last indexed stream ends (the dump's closing ``</mediawiki>`` follows
    in a stream of its own); the file's end when nothing follows it."""
    with open(path, "rb") as fh:
        fh.seek(last)
        data = fh.read()
    dec = bz2.BZ2Decompressor()
    try:
        dec.decompress(data)
    except OSError as e:
        raise LMError(f"{path}: corrupt compressed stream at byte {last} ({e})") from None
    if not dec.eof:
        raise LMError(f"{path}: the compressed file is truncated (its last stream, at byte {last}, "
                      "has no end); the download is probably incomplete, download it again")
    end = size - len(dec.unused_data)
    if dec.unused_data:  # what follows may only be the closing </mediawiki>, no page
        try:
            rest = bz2.BZ2Decompressor().decompress(dec.unused_data, 1 << 20)
        except OSError as e:
            raise LMError(f"{path}: corrupt compressed stream at byte {end} ({e})") from None
        if b"<page>" in rest:
            raise LMError(f"{path}: its multistream index does not match it (the dump has pages after the "
                          f"last indexed stream, at byte {end}); the index of another dump?")
    return end


def read_streams(path: Path, start: int, end: int) -> str:
    """The text of the bz2 streams in bytes ``[start, end)`` of a multistream dump."""
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    out = []
    while data:
        dec = bz2.BZ2Decompressor()
        try:
            out.append(dec.decompress(data))
        except OSError as e:
            raise LMError(f"{path}: corrupt compressed stream in bytes {start}-{end} ({e})") from None
        if not dec.eof:
            raise LMError(f"{path}: the compressed file is truncated (a stream in bytes {start}-{end} has "
                          "no end); the download is probably incomplete, download it again")
        data = dec.unused_data
    return _decode(b"".join(out), path, start)


def blocks(path: Path) -> Iterator[tuple[str, int]]:
    """The pages of a dump read in order, in blocks of whole pages, each with the
    compressed bytes read so far (progress); :class:`LMError`
    for a truncated or corrupt file, or XML that stops mid-page."""
    stream, raw = open_binary(path)
    pending, at, seen_end = b"", 0, False
    try:
        while True:
            try:
                chunk = stream.read(BLOCK_CHARS)
            except EOFError:
                raise LMError(f"{path}: the compressed file is truncated (it ends after {at} bytes of "
                              "text); the download is probably incomplete, download it again") from None
            except OSError as e:
                raise LMError(f"{path}: corrupt compressed file after {at} bytes of text ({e})") from None
            if not chunk:
                break
            pending += chunk
            cut = pending.rfind(b"</page>")
            if cut >= 0:
                cut += len(b"</page>")
                yield _decode(pending[:cut], path, at), raw.tell()
                at += cut
                pending = pending[cut:]
            elif len(pending) > MAX_PAGE_BYTES:  # bounded memory: no page runs on for ever
                raise LMError(f"{path}: a page of more than {MAX_PAGE_BYTES >> 20} MB (no </page> after byte "
                              f"{at} of its text): not a dump MediaWiki writes")
            seen_end = b"</mediawiki>" in pending
    finally:
        raw.close()
    if not seen_end or b"<page>" in pending:
        raise LMError(f"{path}: malformed or truncated XML (no closing </mediawiki> after {at} bytes "
                      "of text); the download is probably incomplete, download it again")


def articles(text: str, path: Path, first_id: int | None = None) -> Iterator[Article | None]:
    """The article of each page of ``text``, None for a page that is none. With
    ``first_id``, the first page must have that id (the index said so)."""
    for n, m in enumerate(_PAGE.finditer(text)):
        body = m.group(1)
        head = body[:body.find("<revision")] if "<revision" in body else body
        ns = _NS.search(head)
        pid = _ID.search(head)
        if n == 0 and first_id is not None and (pid is None or int(pid.group(1)) != first_id):
            raise LMError(f"{path}: its multistream index does not match it (a stream starts with page "
                          f"{pid.group(1) if pid else '?'}, the index says {first_id}); the index of another dump?")
        texts = _TEXT.findall(body)
        wikitext = _unescape(texts[-1]) if texts else ""
        if (ns is not None and ns.group(1) != "0") or "<redirect" in head or not wikitext.strip() \
                or _REDIRECT.match(wikitext):
            yield None
            continue
        title = _TITLE.search(head)
        yield Article(title=_unescape(title.group(1)) if title else "", page_id=int(pid.group(1)) if pid else 0, wikitext=wikitext)


def _unescape(s: str) -> str:
    return _ENTITY.sub(_entity, s) if "&" in s else s


def _entity(m: re.Match) -> str:
    name = m.group(1)
    if name[0] == "#":
        return chr(int(name[2:], 16) if name[1] == "x" else int(name[1:]))
    return _NAMED[name]


def _decode(data: bytes, path: Path, at: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LMError(f"{path}: not valid UTF-8 ({e.reason} at byte {at + e.start} of its text)") from None
