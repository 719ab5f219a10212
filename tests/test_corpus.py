"""lm.corpus.wikidump + lm.corpus.prepare + `agree corpus`: dumps and text files -> corpus directories."""
from __future__ import annotations

import bz2
import json
from pathlib import Path
from textwrap import dedent

import pytest

from conftest import run_agree, shared_path
from formats.errors import AgreeError
from formats.vocab import read_vocab
from lm.corpus.prepare import is_corpus_dir, load_corpus, prepare_corpus, read_counts
from lm.errors import LMError
from lm.corpus.wikidump import iter_pages, wikitext_to_paragraphs

HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>testwiki</dbname>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="6" case="first-letter">Fichier</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""
FOOTER = "</mediawiki>\n"

ARTICLE = dedent("""\
    {{Infobox city|name=Berlin|population=3,500,000}}
    '''Berlin''' is the [[capital city|capital]] of [[Germany]].<ref name="a">{{cite web|url=http://x}}</ref> It has [[river]]s.{{sfn|X|2000}}
    {| class="wikitable"
    |-
    | Table cell text || more
    |}
    [[File:Gate.jpg|thumb|The [[Brandenburg Gate]] at night]]
    [[Fichier:Other.jpg|Local file caption]]
    == History ==
    The city was founded in 1237.<!-- hidden remark -->
    * A list item that is no sentence
    # Another item
    ; Term : definition
    Berlin's wall fell in 1989 &amp; the city reunited.
    == References ==
    Cited works are here.
    === Books ===
    More references.
    == Culture ==
    The city has {{convert|3|km}} of canals and {{lang|de|Berliner Luft}} air.
    [[Category:Cities]]
    [[de:Berlin]]
    """)

SENTENCES = {
    "Berlin is the capital of Germany .",
    "It has rivers .",
    "The city was founded in 1237 .",
    "Berlin 's wall fell in 1989 & the city reunited .",
    "The city has 3 km of canals and Berliner Luft air .",
}


def page(title, text, ns=0, pid=1, redirect=None):
    esc = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    red = f'    <redirect title="{redirect}" />\n' if redirect else ""
    return (f"  <page>\n    <title>{title}</title>\n    <ns>{ns}</ns>\n    <id>{pid}</id>\n{red}"
            f"    <revision>\n      <id>{pid}0</id>\n      <text xml:space=\"preserve\">{esc}</text>\n"
            f"    </revision>\n  </page>\n")


def dump_xml(pages=None) -> str:
    pages = pages if pages is not None else [
        page("Berlin", ARTICLE, pid=1),
        page("Berlin (city)", "#REDIRECT [[Berlin]]", pid=2, redirect="Berlin"),
        page("Talk:Berlin", "This talk page sentence must not appear.", ns=1, pid=3),
        page("Old", "#REDIRECT [[Berlin]]", pid=4),  # redirect without the <redirect> element
    ]
    return HEADER + "".join(pages) + FOOTER


def all_lines(corpus) -> list[str]:
    return [line for p in (corpus.train, corpus.valid, corpus.test)
            for line in p.read_text(encoding="utf-8").splitlines()]


def numbered(n: int, words: str = "the cat sleeps") -> str:
    return "".join(f"{words} {i} .\n" for i in range(n))


class TestWikitext:
    def test_keeps_prose_drops_markup(self):
        paragraphs = wikitext_to_paragraphs(ARTICLE)
        text = " ".join(paragraphs)
        assert "Berlin is the capital of Germany. It has rivers." in paragraphs[0]
        for gone in ("Infobox", "cite", "Table cell", "Gate", "list item", "Another item", "Term",
                     "definition", "hidden", "Cited works", "More references", "Cities", "de:",
                     "{", "[", "<", "|", "History"):
            assert gone not in text, gone
        assert "Berliner Luft" in text and "3 km" in text  # inline templates that render words

    def test_template_source_left_as_text_and_empty_parentheses(self):
        """Template source that reaches the text unparsed (here through nowiki; on the real
        enwiki minidump, a malformed infobox) is removed with the lines it spans."""
        text = ("<nowiki>{{Infobox person\n| name = Anna\n| born = {{birth date|1954}}\n}}</nowiki>\n"
                "'''Anna''' ({{IPA|x}}; {{lang-de|y}}; born 1954) is a chemist.&lt;ref&gt;Cited.&lt;/ref&gt;")
        assert wikitext_to_paragraphs(text) == ["Anna (born 1954) is a chemist."]

    def test_reads_articles_only(self, tmp_path):
        path = tmp_path / "d.xml"
        path.write_text(dump_xml(), encoding="utf-8")
        assert [(p.title, p.page_id) for p in iter_pages(path)] == [("Berlin", 1)]


class TestPrepare:
    @pytest.mark.parametrize("fmt", ["xml", "bz2", "multistream"])
    def test_dump_formats_give_the_same_corpus(self, tmp_path, fmt):
        xml = dump_xml().encode("utf-8")
        path = tmp_path / f"dump.{fmt}"
        if fmt == "xml":
            path.write_bytes(xml)
        elif fmt == "bz2":
            path.write_bytes(bz2.compress(xml))
        else:  # several concatenated bz2 streams, as in pages-articles-multistream
            cut = xml.index(b"  <page>", xml.index(b"  <page>") + 1)
            path.write_bytes(bz2.compress(xml[:cut]) + bz2.compress(xml[cut:]))
        corpus = prepare_corpus([path], tmp_path / "c", "en")
        assert set(all_lines(corpus)) == SENTENCES
        assert corpus.stats["pages"] == 4 and corpus.stats["articles"] == 1

    def test_split_vocab_counts_and_roundtrip(self, tmp_path):
        src = tmp_path / "a.txt"
        src.write_text(numbered(50) + "\n" + numbered(50, "a dog runs"), encoding="utf-8")
        c = prepare_corpus([src], tmp_path / "c", "en")
        assert [len(p.read_text().splitlines()) for p in (c.train, c.valid, c.test)] == [80, 10, 10]
        assert c.n_tokens == {"train": 80 * 5, "valid": 50, "test": 50}
        assert sorted(all_lines(c)) == sorted(numbered(50).splitlines() + numbered(50, "a dog runs").splitlines())
        vocab = read_vocab(c.vocab)
        counts = read_counts(c.counts)
        assert vocab[:2] == ["<eos>", "<unk>"] and set(vocab[2:]) == set(counts)
        ranked = sorted(counts, key=lambda w: (-counts[w], w))
        assert vocab[2:] == ranked and counts["."] == 80
        assert c.counts.read_text().startswith("word\tcount\n")
        assert is_corpus_dir(c.directory)
        again = load_corpus(c.directory)
        assert (again.sha256, again.n_tokens) == (c.sha256, c.n_tokens)

    def test_same_seed_same_bytes_other_seed_other_order(self, tmp_path):
        src = tmp_path / "a.txt"
        src.write_text(numbered(40), encoding="utf-8")
        a = prepare_corpus([src], tmp_path / "a", "en", seed=7)
        b = prepare_corpus([src], tmp_path / "b", "en", seed=7)
        c = prepare_corpus([src], tmp_path / "c", "en", seed=8)
        for name in ("train.txt", "valid.txt", "test.txt", "vocab.txt", "counts.tsv"):
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert a.sha256 == b.sha256 != c.sha256

    def test_unknown_word_filter_and_literal_unk(self, tmp_path):
        src = tmp_path / "a.txt"
        common = "".join("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10\n" for _ in range(20))
        src.write_text(common + "w1 w2 w3 w4 w5 w6 w7 w8 w9 rare\n"  # 10% unknown: dropped
                       "w1 w2 w3 w4 w5 w6 w7 w8 w9 <unk>\n"          # <unk> is always unknown
                       " = = Heading = = \n", encoding="utf-8")     # WikiText heading: skipped
        c = prepare_corpus([src], tmp_path / "c", "en", vocab_size=10)
        assert c.stats["sentences_read"] == 22 and c.stats["sentences_dropped_unk"] == 2
        assert "rare" not in read_counts(c.counts) and len(read_vocab(c.vocab)) == 12
        kept = prepare_corpus([src], tmp_path / "d", "en", vocab_size=10, max_unk=0.1)
        assert kept.stats["sentences_dropped_unk"] == 0
        assert read_counts(kept.counts)["<unk>"] == 1 and "<unk>" not in read_vocab(kept.vocab)[2:]

    def test_lang_option_decides_tokenizer(self, tmp_path):
        text = "L'ordine dell'anno è giunto. Il sig. Rossi è qui."
        path = tmp_path / "it.xml"
        path.write_text(dump_xml([page("Ordine", text)] * 3), encoding="utf-8")  # header says en
        with pytest.raises(LMError, match=r"a dump of the 'en' Wikipedia .* not of lang it"):
            prepare_corpus([path], tmp_path / "c", "it")
        lines = all_lines(prepare_corpus([path], tmp_path / "c", "it", any_dump_lang=True))
        assert "L' ordine dell' anno è giunto ." in lines and "Il sig. Rossi è qui ." in lines

    def test_workers_give_identical_output(self, tmp_path):
        path = tmp_path / "d.xml"
        path.write_text(dump_xml([page(f"P{i}", f"Sentence number {i} is here. And {i} more.", pid=i)
                                  for i in range(1, 30)]), encoding="utf-8")
        a = prepare_corpus([path], tmp_path / "a", "en")
        b = prepare_corpus([path], tmp_path / "b", "en", workers=2)
        assert a.sha256 == b.sha256 and a.stats == b.stats


def truncated_bz2(tmp_path) -> Path:
    articles = [page(f"P{i}", f"Sentence {i} about something. " * 200, pid=i) for i in range(1, 40)]
    data = bz2.compress(dump_xml(articles).encode("utf-8"))
    path = tmp_path / "cut.xml.bz2"
    path.write_bytes(data[: len(data) * 2 // 3])
    return path


class TestErrors:
    def test_truncated_bz2_is_an_error_not_a_short_corpus(self, tmp_path):
        with pytest.raises(LMError, match=r"cut.xml.bz2: the compressed file is truncated .*download it again"):
            prepare_corpus([truncated_bz2(tmp_path)], tmp_path / "c", "en")
        assert not (tmp_path / "c" / ".sentences.tmp").exists()

    def test_truncated_xml(self, tmp_path):
        path = tmp_path / "cut.xml"
        path.write_text(dump_xml()[:-200], encoding="utf-8")
        with pytest.raises(LMError, match=r"cut.xml: malformed or truncated XML \(no closing </mediawiki>"):
            prepare_corpus([path], tmp_path / "c", "en")

    @pytest.mark.parametrize("name, content, message", [
        ("notdump.xml", '<?xml version="1.0"?>\n<rss><channel/></rss>\n',
         "notdump.xml: not a MediaWiki XML dump (its root element is not <mediawiki>)"),
        ("empty.txt", "\n\n", "empty corpus: no sentences in {dir}/empty.txt"),
        ("two.txt", "one sentence .\nanother one .\n",
         "too few sentences: 2 of 2 in {dir}/two.txt have at most 5% unknown words; need at least 3 "
         "(one each for train, valid and test)"),
        ("bad.txt", b"fine line\n\xff\xfe broken\n", "{dir}/bad.txt:2: not valid UTF-8 (invalid start byte at byte 0 of the line)"),
    ])
    def test_bad_inputs(self, tmp_path, name, content, message):
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        with pytest.raises(LMError) as e:
            prepare_corpus([path], tmp_path / "c", "en")
        assert str(e.value).endswith(message.format(dir=tmp_path))

    def test_missing_file_and_not_a_corpus(self, tmp_path):
        with pytest.raises(LMError, match="nope.xml.bz2: no such file"):
            prepare_corpus([tmp_path / "nope.xml.bz2"], tmp_path / "c", "en")
        with pytest.raises(LMError, match=r"not a corpus directory \(no train.txt, valid.txt, test.txt, vocab.txt\)"):
            load_corpus(tmp_path)
        (tmp_path / "vocab.txt").write_text("the\n<eos>\n<unk>\n")
        with pytest.raises(AgreeError, match="starts with <eos> and <unk>"):
            read_vocab(tmp_path / "vocab.txt")


class TestCli:
    def run(self, *args):
        return run_agree("corpus", *args)

    def test_writes_corpus_and_manifest(self, tmp_path):
        src = tmp_path / "a.txt"
        src.write_text(numbered(30), encoding="utf-8")
        r = self.run(src, "--lang", "en", "--out", tmp_path / "out", "--vocab-size", "40")
        assert r.exit_code == 0, r.output
        assert "(150 tokens) read" in r.stderr and "train/valid/test 120/15/15 tokens" in r.stderr
        manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
        assert manifest["command"] == "corpus" and manifest["parameters"]["vocab_size"] == 40
        assert manifest["n_tokens"] == {"train": 120, "valid": 15, "test": 15}
        c = load_corpus(tmp_path / "out")
        assert c.lang == "en" and c.sha256 == manifest["sha256"] and len(read_vocab(c.vocab)) == 2 + 4 + 24  # specials, the cat sleeps ., 24 numbers

    def test_error_leaves_no_output(self, tmp_path):
        out = tmp_path / "out"
        r = self.run(truncated_bz2(tmp_path), "--lang", "en", "--out", out, "-q")
        assert r.exit_code == 1
        assert r.output.startswith(f"Error: {tmp_path}/cut.xml.bz2: the compressed file is truncated")
        assert list(tmp_path.iterdir()) == [tmp_path / "cut.xml.bz2"]  # no out, no temp dir

    def test_missing_file(self, tmp_path):
        r = self.run(tmp_path / "x.xml.bz2", "--lang", "en", "--out", tmp_path / "o")
        assert (r.exit_code, r.output) == (1, f"Error: {tmp_path}/x.xml.bz2: no such file\n")

    def test_help_has_example(self):
        r = self.run("--help")
        assert r.exit_code == 0 and "Example:\n    agree corpus" in r.output


@pytest.mark.integration
def test_real_english_dump_fragment(tmp_path):
    """The shipped enwiki fragment is complete (bz2 end-of-stream and </mediawiki> present)
    and yields about 465k tokens of clean prose from its 106 articles."""
    dump = shared_path("wiki", "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
    c = prepare_corpus([dump], tmp_path / "c", "en")
    assert (c.stats["pages"], c.stats["articles"]) == (206, 106)
    assert 400_000 < sum(c.n_tokens.values()) < 520_000
    text = c.train.read_text(encoding="utf-8")
    for markup in ("{{", "}}", "[[", "]]", "<ref", "&amp;", "|-"):
        assert markup not in text
    assert " do n't " in text or " does n't " in text


@pytest.mark.integration
def test_real_italian_minidump_with_english_header(tmp_path):
    dump = shared_path("wiki", "itwiki-minidump-berlin.xml.bz2")
    c = prepare_corpus([dump], tmp_path / "c", "it", any_dump_lang=True)  # the header is wrong
    words = set(read_counts(c.counts))
    assert {"dell'", "l'", "Berlino"} <= words
