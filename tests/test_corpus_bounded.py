"""lm.corpus.shuffle: the shuffle of a corpus past the in-memory size, an external sort
of seeded keys; the same bytes for any worker count and a resume, every sentence once,
8:1:1, and a peak memory that does not grow with the corpus. The size limits are lowered
here so that tiny inputs take the external path, in several runs merged in rounds."""
from __future__ import annotations

import json
import random
import tracemalloc
from collections import Counter

import pytest

from conftest import run_agree
from lm.corpus import prepare, shuffle
from lm.corpus.prepare import prepare_corpus
from lm.errors import LMError
from test_corpus import all_lines
from test_corpus_ranges import (SPLIT_FILES, multistream, ray_gives_the_local_bytes, same_files,  # noqa: F401
                                small_ranges)  # small_ranges: a fixture


@pytest.fixture
def external(monkeypatch):
    """Every corpus past the in-memory shuffle; runs of 4 KB, merged 3 at a time."""
    monkeypatch.setattr(shuffle, "IN_MEMORY_SENTENCES", 10)
    monkeypatch.setattr(shuffle, "RUN_BYTES", 4 << 10)
    monkeypatch.setattr(shuffle, "FAN_IN", 3)


def text_corpus(path, n: int, seed: int = 5, words: int = 60, length: int = 16):
    """n lines of ``length`` words drawn from ``words`` words (w0, w1, ...)."""
    rng = random.Random(seed)
    path.write_text("".join(" ".join(f"w{rng.randrange(words)}" for _ in range(length)) + "\n" for _ in range(n)))
    return path


def split_lines(directory) -> dict[str, list[str]]:
    return {s: (directory / f"{s}.txt").read_text().splitlines() for s in ("train", "valid", "test")}


def counted(directory) -> dict[str, int]:
    rows = (directory / "counts.tsv").read_text().splitlines()[1:]
    return {w: int(c) for w, c in (r.split("\t") for r in rows)}


class TestExternalShuffle:
    def test_same_bytes_for_any_worker_count_and_a_resume(self, tmp_path, small_ranges, external):
        dump, _ = multistream(tmp_path)
        outs = [prepare_corpus([dump], tmp_path / f"w{w}", "en", workers=w) for w in (1, 2, 3)]
        assert outs[0].stats["shuffle_runs"] > 3  # merged in rounds
        assert len({c.sha256 for c in outs}) == 1 and same_files(tmp_path / "w1", tmp_path / "w3")

        def stopped_after(fn, tasks):
            for k, task in enumerate(tasks):
                if k == 7:
                    raise KeyboardInterrupt
                yield task, fn(task)

        work = tmp_path / "work"
        with pytest.raises(KeyboardInterrupt):
            prepare_corpus([dump], tmp_path / "a", "en", work=work, runner=stopped_after)
        resumed = prepare_corpus([dump], tmp_path / "b", "en", work=work, workers=2)
        assert resumed.sha256 == outs[0].sha256 and same_files(tmp_path / "w1", tmp_path / "b")

    def test_every_sentence_once_in_8_1_1_and_counts_of_train(self, tmp_path, monkeypatch):
        src = text_corpus(tmp_path / "in.txt", 3000)
        inside = prepare_corpus([src], tmp_path / "mem", "en", vocab_size=58, seed=3)
        monkeypatch.setattr(shuffle, "IN_MEMORY_SENTENCES", 100)
        monkeypatch.setattr(shuffle, "RUN_BYTES", 8 << 10)
        ext = prepare_corpus([src], tmp_path / "ext", "en", vocab_size=58, seed=3)
        kept = 3000 - ext.stats["sentences_dropped_unk"]
        assert 0 < ext.stats["sentences_dropped_unk"] == inside.stats["sentences_dropped_unk"] < 3000
        lines = split_lines(tmp_path / "ext")
        assert {s: len(v) for s, v in lines.items()} == {"train": kept - 2 * (kept // 10),
                                                          "valid": kept // 10, "test": kept // 10}
        # the same sentences as the in-memory path keeps, each once, in another order
        assert Counter(all_lines(ext)) == Counter(all_lines(inside))
        assert lines["train"] != split_lines(tmp_path / "mem")["train"]
        kept_in_order = [line for line in src.read_text().splitlines() if line in set(all_lines(inside))]
        assert lines["train"] + lines["valid"] != kept_in_order  # shuffled
        # the training counts (all words less held-out and dropped) are those of train.txt
        assert counted(tmp_path / "ext") == Counter(w for line in lines["train"] for w in line.split())
        assert ext.n_tokens == {s: sum(len(x.split()) for x in v) for s, v in lines.items()}

    def test_nothing_dropped_every_input_line_once(self, tmp_path, external):
        src = text_corpus(tmp_path / "in.txt", 1000, words=20)
        c = prepare_corpus([src], tmp_path / "o", "en", seed=1)
        assert Counter(all_lines(c)) == Counter(src.read_text().splitlines())
        other = prepare_corpus([src], tmp_path / "p", "en", seed=2)
        assert c.sha256 != other.sha256 and Counter(all_lines(other)) == Counter(all_lines(c))

    def test_runs_removed_on_success_and_on_failure(self, tmp_path, external):
        src = text_corpus(tmp_path / "in.txt", 500)
        prepare_corpus([src], tmp_path / "o", "en")
        assert sorted(p.name for p in (tmp_path / "o").iterdir()) == sorted(SPLIT_FILES)
        with pytest.raises(LMError, match="too few sentences"):  # raised after the runs are written
            prepare_corpus([src], tmp_path / "f", "en", vocab_size=5, max_unk=0.0)
        assert list((tmp_path / "f").iterdir()) == []

    def test_cli_external_path_any_workers(self, tmp_path, small_ranges, external):
        dump, _ = multistream(tmp_path, n_pages=80)
        for w in (1, 2):
            r = run_agree("corpus", dump, "--lang", "en", "--workers", w, "--out", tmp_path / f"o{w}", "-q")
            assert r.exit_code == 0, r.output
        assert same_files(tmp_path / "o1", tmp_path / "o2")
        assert json.loads((tmp_path / "o1/manifest.json").read_text())["stats"]["shuffle_runs"] > 1
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [dump.name, f"{dump.name[:-8]}-index.txt.bz2", "o1", "o2"])

    def test_ray_gives_the_local_bytes(self, tmp_path, small_ranges, external):
        on_ray = ray_gives_the_local_bytes(tmp_path)
        assert json.loads((on_ray / "manifest.json").read_text())["stats"]["shuffle_runs"] > 1


def peak_kib(src, out, **kw) -> int:
    tracemalloc.start()
    try:
        prepare_corpus([src], out, "en", vocab_size=58, **kw)
        return tracemalloc.get_traced_memory()[1] >> 10
    finally:
        tracemalloc.stop()


def test_peak_memory_does_not_grow_with_the_sentences(tmp_path, monkeypatch):
    """Both sizes are past every batch of a fixed size (lowered here, the checksum's
    blocks too); the in-memory path's peak grows with them (16 bytes a sentence and
    more), the external path's does not."""
    monkeypatch.setattr(prepare, "_HASH_BLOCK", 64 << 10)
    small, large = (text_corpus(tmp_path / f"{n}.txt", n) for n in (12_000, 48_000))
    grows = peak_kib(large, tmp_path / "ml") - peak_kib(small, tmp_path / "ms")
    monkeypatch.setattr(shuffle, "IN_MEMORY_SENTENCES", 0)
    for name, value in (("RUN_BYTES", 64 << 10), ("FAN_IN", 4), ("_READ", 8 << 10), ("_BATCH", 500),
                        ("_BUFFER", 8 << 10)):
        monkeypatch.setattr(shuffle, name, value)
    peaks = [peak_kib(src, tmp_path / f"e{i}") for i, src in enumerate((small, large))]
    assert grows > 300, grows  # the measurement sees growth where there is some
    assert peaks[1] < peaks[0] + 50, (peaks, grows)
    assert peaks[1] < 1 << 10, (peaks, grows)
