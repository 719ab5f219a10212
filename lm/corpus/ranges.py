"""Pass 1 of a corpus over a dump: ranges of pages parsed by workers, kept for a resume.

A range (:mod:`lm.corpus.dumpread`) is a task: a worker reads its pages, cleans each
article's wikitext (:mod:`lm.corpus.wikitext`), splits and tokenises its sentences
(:mod:`lm.corpus.tokenize`) and writes them to ``NNNNNN.txt`` in the work directory,
then ``NNNNNN.counts`` with its word counts (``marshal``: a dict) and ``NNNNNN.json`` with
its figures (each written to a temporary name and renamed:
a range is finished when its ``.json`` exists). The caller reads the finished ranges
in dump order, whatever order the workers finish them in, so the corpus is the same
for any number of workers; a run that was interrupted finds its finished ranges in
the work directory and parses only the others.

Runners: ``runner(fn, tasks)`` yields ``(task, fn(task))`` in any order, for an
iterable of tasks that may be long (a whole dump) and is consumed lazily, at most
:data:`AHEAD` tasks per worker ahead of the results read. :func:`local_runner` is
this process or a process pool; ``agree corpus --executor ray`` passes one on Ray.
"""
from __future__ import annotations

import json
import logging
import marshal
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

from formats.files import atomic_write_bytes
from formats.processes import in_processes
from lm.corpus.dumpread import articles, blocks, index_path, read_header, read_streams, stream_ranges
from lm.corpus.tokenize import get_tokenizer
from lm.corpus.wikitext import wikitext_to_paragraphs
from lm.errors import FieldError, literal

log = logging.getLogger(__name__)

#: tasks handed out per worker ahead of the results read (bounds the blocks in memory)
AHEAD = 2
#: wikitext larger than this is skipped: MediaWiki refuses to save pages over 2 MB, so
#: such a page is a fault of the dump (a template loop), not prose
MAX_PAGE_CHARS = 4 << 20


@dataclass(frozen=True)
class RangeTask:
    """One range of one dump. number: its place in dump order; out: its files' path in
    the work directory, without suffix; start, end, first_id: its compressed bytes and
    first page's id (multistream); text: the block itself (a dump read in order)."""
    number: int
    path: str
    lang: str
    clitics: str
    media: frozenset
    out: str
    start: int = 0
    end: int = 0
    first_id: int | None = None
    text: str | None = None


@dataclass(frozen=True)
class RangeResult:
    """What a range held: pages, articles, pages_too_large (skipped), sentences,
    tokens; marks: (sentences, tokens) so far after each article, for a cut at
    ``max_tokens``; compressed: the bytes of the dump it covers (progress)."""
    number: int
    pages: int
    articles: int
    pages_too_large: int
    sentences: int
    tokens: int
    marks: list
    compressed: int


def run_range(task: RangeTask) -> RangeResult:
    """Parse one range and write its sentences (a task: top-level, one picklable argument)."""
    path = Path(task.path)
    text = task.text if task.text is not None else read_streams(path, task.start, task.end)
    tok = get_tokenizer(task.lang, task.clitics)
    lines, marks, n_tokens, pages, n_articles, too_large = [], [], 0, 0, 0, 0
    counts: Counter = Counter()  # counted here, where the words' hashes are already known
    for article in articles(text, path, task.first_id):
        pages += 1
        if article is None:
            continue
        if len(article.wikitext) > MAX_PAGE_CHARS:
            too_large += 1
            continue
        n_articles += 1
        for para in wikitext_to_paragraphs(article.wikitext, task.media):
            for sent in tok.sentences(para):
                if any(w.isalpha() for w in sent) or any(c.isalpha() for w in sent for c in w):
                    lines.append(" ".join(sent))
                    n_tokens += len(sent)
                    counts.update(sent)
        marks.append((len(lines), n_tokens))
    result = RangeResult(number=task.number, pages=pages, articles=n_articles, pages_too_large=too_large,
                         sentences=len(lines), tokens=n_tokens, marks=marks,
                         compressed=task.end - task.start)
    atomic_write_bytes(Path(task.out + ".txt"), "".join(line + "\n" for line in lines).encode("utf-8"))
    atomic_write_bytes(Path(task.out + ".counts"), marshal.dumps(dict(counts)))
    atomic_write_bytes(Path(task.out + ".json"), json.dumps(asdict(result)).encode("utf-8"))
    return result


def dump_tasks(path: Path, lang: str, clitics: str, work: Path, first: int,
               any_dump_lang: bool = False) -> Iterator[RangeTask]:
    """The ranges of one dump as tasks, numbered from ``first``; a finished range (its
    .json in ``work``) comes back with ``out`` set and no work to do (``end`` < 0)."""
    header = read_header(path)
    if not any_dump_lang and header.lang and header.lang != lang.lower().split("_")[0].split("-")[0]:
        raise FieldError(f"{literal(path)}: a dump of the {header.lang!r} Wikipedia (its header says so), not "
                         f"of {{lang}} {lang}; give the dump's language, or {{any_dump_lang}} for a dump "
                         "whose header is wrong")
    base = RangeTask(number=first, path=str(path), lang=lang, clitics=clitics, media=header.media,
                     out=str(work / f"{first:06d}"))
    index = index_path(path)
    if index is not None:
        for k, (start, end, first_id) in enumerate(stream_ranges(path, index)):
            yield replace(base, number=first + k, out=str(work / f"{first + k:06d}"), start=start, end=end,
                          first_id=first_id)
        return
    start = 0
    for k, (text, end) in enumerate(blocks(path)):
        done = (work / f"{first + k:06d}.json").is_file()  # resumed: no need to send the text
        yield replace(base, number=first + k, out=str(work / f"{first + k:06d}"),
                      text=None if done else text, start=start, end=end)
        start = end


def finished(task: RangeTask, marks: bool = True) -> RangeResult | None:
    """The result of a range finished by an earlier run, or None; without ``marks``
    (only a cut at max_tokens reads them)."""
    meta = Path(task.out + ".json")
    if not meta.is_file() or not Path(task.out + ".txt").is_file() or not Path(task.out + ".counts").is_file():
        return None
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
        return RangeResult(**{**data, "marks": [tuple(m) for m in data["marks"]] if marks else []})
    except (ValueError, TypeError, KeyError):
        return None  # a damaged record: parse the range again


def in_order(tasks: Iterable[RangeTask], runner: Callable, marks: bool = True) -> Iterator[RangeResult]:
    """The results of ``tasks`` in their order: finished ones read back, the others run
    by ``runner`` (which keeps a bounded number in flight)."""
    done: dict[int, RangeResult] = {}
    expected: deque[int] = deque()  # numbers handed out and not yet yielded (bounded by the runner's ahead)

    def feed():
        for task in tasks:
            expected.append(task.number)
            if (prior := finished(task, marks)) is not None:
                done[task.number] = prior
                continue
            yield task

    results = runner(run_range, feed())
    for _, result in results:
        done[result.number] = result
        while expected and expected[0] in done:
            yield done.pop(expected.popleft())
    while expected and expected[0] in done:
        yield done.pop(expected.popleft())


def local_runner(workers: int) -> Callable:
    """A runner of this machine: a loop here (1 worker) or a pool of processes."""
    def run(fn, tasks):
        if workers <= 1:
            for task in tasks:
                yield task, fn(task)
            return
        yield from in_processes(fn, tasks, workers, ahead=AHEAD * workers)
    return run


def elapsed_rate(tokens: int, since: float) -> str:
    """Words per second since ``since`` (a time.monotonic()), for a progress line."""
    return f"{tokens / max(time.monotonic() - since, 1e-9):,.0f}"
