"""lm.corpus.dumpread + lm.corpus.ranges + lm.corpus.gather: dumps parsed in ranges by
worker processes, the same corpus for any number of them, cut at max_tokens, resumed
after an interruption; the bad dumps a whole-dump run meets."""
from __future__ import annotations

import bz2
import json
import time

import pytest

from conftest import run_agree
from lm.corpus import dumpread, ranges
from lm.corpus.prepare import prepare_corpus
from lm.corpus.wikitext import wikitext_to_paragraphs
from lm.errors import LMError
from test_corpus import FOOTER, HEADER, all_lines, page

SPLIT_FILES = ("train.txt", "valid.txt", "test.txt", "vocab.txt", "counts.tsv")


def pages(n: int, first: int = 1) -> list[str]:
    """n articles of 3 sentences (17 tokens each) whose words say their page."""
    return [page(f"Page {i}", f"Page {i} starts here. It has words {i}. The end of {i} is near.", pid=i)
            for i in range(first, first + n)]


def multistream(tmp_path, n_pages: int = 250, per_stream: int = 10, name: str = "xx-multistream"):
    """A multistream dump and its index, as Wikipedia publishes them."""
    dump = tmp_path / f"{name}.xml.bz2"
    index = tmp_path / f"{name}-index.txt.bz2"
    all_pages = pages(n_pages)
    with open(dump, "wb") as fh, bz2.open(index, "wt", encoding="utf-8") as ix:
        fh.write(bz2.compress(HEADER.encode()))
        for s in range(0, n_pages, per_stream):
            offset = fh.tell()
            ix.write("".join(f"{offset}:{i + 1}:Page {i + 1}\n" for i in range(s, min(s + per_stream, n_pages))))
            fh.write(bz2.compress("".join(all_pages[s:s + per_stream]).encode()))
        fh.write(bz2.compress(FOOTER.encode()))
    return dump, index


def same_files(a, b) -> bool:
    return all((a / f).read_bytes() == (b / f).read_bytes() for f in SPLIT_FILES)


def ray_gives_the_local_bytes(tmp_path):
    """``agree corpus`` on a small dump, here and on Ray with 2 workers: the same files.
    Returns the Ray run's directory."""
    pytest.importorskip("ray")
    dump, _ = multistream(tmp_path, n_pages=60)
    local = run_agree("corpus", dump, "--lang", "en", "--out", tmp_path / "local", "-q")
    on_ray = run_agree("corpus", dump, "--lang", "en", "--executor", "ray", "--workers", "2",
                       "--out", tmp_path / "ray", "-q")
    assert local.exit_code == 0 and on_ray.exit_code == 0, on_ray.output
    assert same_files(tmp_path / "local", tmp_path / "ray")
    return tmp_path / "ray"


@pytest.fixture
def small_ranges(monkeypatch):
    """Ranges of 2 streams and blocks of a few pages, so that tiny dumps have several
    (the worker processes are forked: they see the patched sizes)."""
    monkeypatch.setattr(dumpread, "RANGE_BYTES", 1)
    monkeypatch.setattr(dumpread, "BLOCK_CHARS", 4000)


class TestRanges:
    def test_index_gives_ranges_of_whole_streams(self, tmp_path, small_ranges):
        dump, index = multistream(tmp_path)
        assert dumpread.index_path(dump) == index
        got = dumpread.stream_ranges(dump, index)
        assert len(got) == 25 and [first for _, _, first in got] == list(range(1, 251, 10))
        assert all(a[1] == b[0] for a, b in zip(got, got[1:]))  # contiguous
        text = dumpread.read_streams(dump, *got[3][:2])
        assert [a.page_id for a in dumpread.articles(text, dump, 31)] == list(range(31, 41))

    @pytest.mark.parametrize("kind", ["multistream", "plain"])
    def test_any_worker_count_gives_the_same_bytes(self, tmp_path, small_ranges, kind):
        if kind == "multistream":
            dump, _ = multistream(tmp_path)
        else:
            dump = tmp_path / "plain.xml.bz2"
            dump.write_bytes(bz2.compress((HEADER + "".join(pages(250)) + FOOTER).encode()))
        outs = [prepare_corpus([dump], tmp_path / f"w{w}", "en", workers=w) for w in (1, 2, 3)]
        assert outs[0].stats["ranges"] > 5 and outs[0].stats["articles"] == 250
        assert len({c.sha256 for c in outs}) == 1
        assert same_files(tmp_path / "w1", tmp_path / "w3")
        assert outs[0].stats == outs[1].stats == outs[2].stats

    def test_max_tokens_takes_the_first_whole_pages(self, tmp_path, small_ranges):
        dump, _ = multistream(tmp_path)
        cut = [prepare_corpus([dump], tmp_path / f"w{w}", "en", workers=w, max_tokens=100) for w in (1, 2)]
        assert cut[0].sha256 == cut[1].sha256
        # 17 tokens a page: 100 tokens are reached inside page 6, which is kept whole
        assert cut[0].stats["articles"] == 6 and cut[0].stats["tokens_read"] == 102
        words = {w for line in all_lines(cut[0]) for w in line.split()}
        assert "6" in words and "7" not in words

    def test_interrupted_run_resumes_from_its_finished_ranges(self, tmp_path, small_ranges):
        dump, _ = multistream(tmp_path)
        work = tmp_path / "work"
        straight = prepare_corpus([dump], tmp_path / "straight", "en")

        def stopped_after(n):
            def runner(fn, tasks):
                for k, task in enumerate(tasks):
                    if k == n:
                        raise KeyboardInterrupt
                    yield task, fn(task)
            return runner

        with pytest.raises(KeyboardInterrupt):
            prepare_corpus([dump], tmp_path / "a", "en", work=work, runner=stopped_after(7))
        assert len(list(work.glob("*.txt"))) == 7 and not list(work.glob(".*.tmp"))
        ran = []

        def counting(fn, tasks):
            for task in tasks:
                ran.append(task.number)
                yield task, fn(task)

        resumed = prepare_corpus([dump], tmp_path / "b", "en", work=work, runner=counting)
        assert ran == list(range(7, 25))  # only the ranges not finished before
        assert resumed.sha256 == straight.sha256 and same_files(tmp_path / "straight", tmp_path / "b")

    def test_work_of_other_inputs_is_not_taken_up(self, tmp_path, small_ranges):
        dump, _ = multistream(tmp_path)
        work = tmp_path / "work"
        prepare_corpus([dump], tmp_path / "a", "en", work=work)
        other, _ = multistream(tmp_path, n_pages=40, name="yy-multistream")
        c = prepare_corpus([other], tmp_path / "b", "en", work=work)
        assert c.stats["articles"] == 40


class TestBadDumps:
    def test_truncated_multistream(self, tmp_path):
        dump, _ = multistream(tmp_path)
        data = dump.read_bytes()
        dump.write_bytes(data[:len(data) - 200])
        with pytest.raises(LMError, match=r"xx-multistream.xml.bz2: the compressed file is truncated"):
            prepare_corpus([dump], tmp_path / "c", "en")
        assert not (tmp_path / "c" / ".sentences.tmp").exists()

    def test_index_of_another_dump(self, tmp_path):
        """The other dump's streams start elsewhere (a bigger dump's index would name
        offsets past this one's end: the truncation message, which names both causes)."""
        dump, index = multistream(tmp_path)
        (tmp_path / "o").mkdir()
        _, other_index = multistream(tmp_path / "o", n_pages=100, per_stream=7)
        index.write_bytes(other_index.read_bytes())
        with pytest.raises(LMError, match=r"index.txt.bz2: does not match xx-multistream.xml.bz2|"
                                          r"its multistream index does not match it"):
            prepare_corpus([dump], tmp_path / "c", "en")

    def test_index_with_other_page_ids(self, tmp_path):
        dump, index = multistream(tmp_path)
        lines = bz2.decompress(index.read_bytes()).decode().splitlines()
        shifted = [f"{line.split(':')[0]}:{int(line.split(':')[1]) + 1000}:x" for line in lines]
        index.write_bytes(bz2.compress(("\n".join(shifted) + "\n").encode()))
        with pytest.raises(LMError, match=r"its multistream index does not match it \(a stream starts "
                                          r"with page 1, the index says 1001\)"):
            prepare_corpus([dump], tmp_path / "c", "en")

    def test_index_covering_part_of_the_dump(self, tmp_path):
        dump, index = multistream(tmp_path)
        lines = bz2.decompress(index.read_bytes()).decode().splitlines(keepends=True)
        index.write_bytes(bz2.compress("".join(lines[:100]).encode()))
        with pytest.raises(LMError, match=r"its multistream index does not match it \(the dump has pages after "
                                          r"the last indexed stream"):
            prepare_corpus([dump], tmp_path / "c", "en")

    def test_dump_of_another_language(self, tmp_path):
        dump = tmp_path / "dewiki.xml"
        dump.write_text(HEADER.replace('xml:lang="en"', 'xml:lang="de"') + "".join(pages(5)) + FOOTER)
        with pytest.raises(LMError, match=r"dewiki.xml: a dump of the 'de' Wikipedia \(its header says so\), "
                                          r"not of lang en; give the dump's language, or any_dump_lang"):
            prepare_corpus([dump], tmp_path / "c", "en")
        assert prepare_corpus([dump], tmp_path / "d", "en", any_dump_lang=True).stats["articles"] == 5

    def test_template_loop_is_linear(self):
        """Templates nested 200,000 deep (a loop written out) take a linear scan, and the
        prose around them stays."""
        depth = 200_000
        text = "Before it. " + "{{loop|" * depth + "x" + "}}" * depth + " After it.\n\nUnclosed " + "{{a|" * depth
        start = time.process_time()
        assert wikitext_to_paragraphs(text) == ["Before it. After it."]
        assert time.process_time() - start < 10

    def test_page_over_the_size_limit_is_skipped(self, tmp_path, monkeypatch):
        monkeypatch.setattr(ranges, "MAX_PAGE_CHARS", 5000)
        big = page("Loop", "{{loop|" * 2000 + "}}" * 2000 + " Some text here.", pid=99)
        dump = tmp_path / "d.xml"
        dump.write_text(HEADER + "".join(pages(5)) + big + FOOTER)
        c = prepare_corpus([dump], tmp_path / "c", "en")
        assert c.stats["pages_too_large"] == 1 and c.stats["articles"] == 5


class TestWikitextScanner:
    @pytest.mark.parametrize("wikitext, paragraphs", [
        ("A {{formatnum:{{inflation|US|800}}}} b and {{formatnum:1234}} c.", ["A b and 1234 c."]),
        ("He said {{nowrap|{{convert|5|km}} away}} now.", ["He said 5 km away now."]),
        ("[[File:X.jpg|thumb|A [[nested]] caption]]Text [[a|b]] and [[c#d]] [[:Category:Y]].",
         ["Text b and c ."]),
        ("Keep.\n{|\n| cell {{x}}\n{|\n| inner\n|}\n|}\nAfter.", ["Keep.", "After."]),
        ("Intro.\n== See also ==\nGone.\n=== Sub ===\nGone too.\n== Life ==\nBack.", ["Intro.", "Back."]),
        ("OS&nbsp;X &amp; 35&#160;mm <span>kept</span><sup>1</sup> [http://x.org label] http://y.org.",
         ["OS X & 35 mm kept label ."]),
        ("<math>{{a}}</math>Text<ref name=\"r\"/> more<ref>{{cite|x}}</ref>.\n* list\n# item", ["Text more."]),
    ])
    def test_markup(self, wikitext, paragraphs):
        assert wikitext_to_paragraphs(wikitext) == paragraphs


class TestCli:
    def test_resume_message_and_no_work_left(self, tmp_path, small_ranges):
        dump, _ = multistream(tmp_path)
        out = tmp_path / "out"
        r = run_agree("corpus", dump, "--lang", "en", "--workers", "2", "--max-tokens", "600", "--out", out)
        assert r.exit_code == 0, r.output
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["parameters"]["max_tokens"] == 600 and manifest["stats"]["articles"] == 36
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([dump.name, f"{dump.name[:-8]}-index.txt.bz2",
                                                                     "out"])

    def test_another_language_is_one_error_line(self, tmp_path):
        dump = tmp_path / "dewiki.xml"
        dump.write_text(HEADER.replace('xml:lang="en"', 'xml:lang="de"') + "".join(pages(5)) + FOOTER)
        r = run_agree("corpus", dump, "--lang", "en", "--out", tmp_path / "o")
        assert r.exit_code == 1 and r.output.count("\n") == 1
        assert r.output.startswith("Error: ") and "not of --lang en" in r.output and "--any-dump-lang" in r.output
        assert not (tmp_path / "o").exists() and not (tmp_path / ".o.resume").exists()

    def test_ray_gives_the_local_bytes(self, tmp_path, small_ranges):
        ray_gives_the_local_bytes(tmp_path)
