"""The release of agree extract-all (formats.release, formats.release_card, the
``release`` test-set format) and the folder reader (treebanks.ud_release): rows and
items, Parquet, damaged files, detection beside BLiMP, agree score and
datasets.load_dataset reading it back; licences read from LICENSE.txt, README.md and
TREEBANKS.md."""
from __future__ import annotations

import json

import pytest

from agreement.extraction.batch import COMMAND, extract_languages
from conftest import run_agree
from formats.errors import AgreeError
from formats.items import read_items
from formats.release import FIELDS, Source, read_release, release_row, split_item_id
from formats.release_card import COUNT_COLUMNS, IndexRow, ReleaseCard, datasheet, read_index
from formats.run import RunContext
from formats.spacing import render
from formats.testsets import detect_testset, load_testset
from test_extract_all import ud_folder
from test_score_cli import unigram
from treebanks.ud_release import licence_in_text, read_treebank_table, read_ud_folder, treebank_of


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """The fake UD release of test_extract_all, mined (Italian and Maltese)."""
    root = tmp_path_factory.mktemp("release")
    extract_languages(RunContext(COMMAND, out=root / "out"), ud_folder(root / "ud"), n=3, exclude=("wo",))
    return root / "out"


def yaml_front_matter(card: str) -> dict:
    yaml = pytest.importorskip("yaml", reason="PyYAML (a dependency of datasets and mkdocs) is not installed")
    return yaml.safe_load(card.split("---\n")[1])


def rows_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


class TestRows:
    def test_a_row_has_the_fields_and_reads_back_as_its_item(self, release):
        originals = list(read_items(release / "it"))
        first = rows_of(release / "it" / "pairs.jsonl")[0]
        assert list(first) == sorted(FIELDS) and first["variant"] == 0
        item = originals[0]
        assert first["sentence_good"] == item.text and first["one_prefix_word_good"] == item.correct
        bad = list(item.tokens)
        bad[item.target_index] = item.wrong
        assert first["sentence_bad"] == render(bad, item.spacing) != first["sentence_good"]
        back = next(read_release(release / "it" / "pairs.jsonl"))
        for name in ("item_id", "tokens", "correct", "wrong", "cue_index", "target_index", "attractors", "relation",
                     "feature", "wrong_value", "scoring", "wrong_source", "text", "number"):
            assert getattr(back, name) == getattr(item, name), name
        assert back.construction == f"it {item.relation} {item.feature}"
        licences = {(r["treebank"], r["license"]) for r in rows_of(release / "it" / "pairs.jsonl")}
        assert licences == {("it_toy", "CC BY-NC-SA 4.0"), ("it_other", "CC BY-SA 4.0")}

    def test_sentence_scored_rows_say_the_prefix_does_not_decide(self, release):
        rows = rows_of(release / "it" / "pairs.jsonl")
        before = [r for r in rows if r["target_side"] == "before"]
        assert before and all(r["scoring"] == "sentence" and r["one_prefix_method"] is False for r in before)
        assert all(r["one_prefix_method"] for r in rows if r["target_side"] == "after")

    def test_item_id_parts(self):
        assert split_item_id("it_isdt-ud-test:isst_tanl-3:4-6:Number") == ("it_isdt", "test", "isst_tanl-3")
        assert split_item_id("toy:s1:0-1:Gender") == ("toy", "", "s1")
        assert split_item_id("ab_abnc-ud-test:a:b:c:22-21:Number") == ("ab_abnc", "test", "a:b:c")

    def test_parquet_holds_the_same_rows(self, release):
        pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed")
        assert pq.read_table(release / "it" / "pairs.parquet").to_pylist() == rows_of(release / "it" / "pairs.jsonl")
        assert pq.read_table(release / "mt" / "pairs.parquet").num_rows == 0

    def test_without_pyarrow_no_parquet(self, tmp_path):
        out = tmp_path / "out"
        extract_languages(RunContext(COMMAND, out=out), ud_folder(tmp_path / "ud"), n=1, only=("it",), parquet=False)
        assert not (out / "it" / "pairs.parquet").exists()
        assert "pairs.parquet" not in (out / "README.md").read_text()

    @pytest.mark.parametrize("line, message", [
        ('{"sentence_good": "x"', r"pairs.jsonl:2: not JSON \(Expecting"),
        ('{"sentence_good": "a b"}', r"pairs.jsonl:2: not a release row \(attractors, cue, cue_index, distance: "
                                     r"missing or not int, str, int, int\)"),
        ("[1, 2]", r"pairs.jsonl:2: not a JSON object"),
    ])
    def test_a_damaged_line_is_one_error_naming_it(self, release, tmp_path, line, message):
        bad = tmp_path / "pairs.jsonl"
        bad.write_text((release / "it" / "pairs.jsonl").read_text().splitlines()[0] + "\n" + line + "\n")
        with pytest.raises(AgreeError, match=message):
            list(read_release(bad))

    def test_a_row_whose_target_is_not_its_token_is_refused(self, release, tmp_path):
        row = rows_of(release / "it" / "pairs.jsonl")[0]
        row["one_prefix_word_good"] = "nope"
        (tmp_path / "pairs.jsonl").write_text(json.dumps(row) + "\n")
        with pytest.raises(AgreeError, match=r"pairs.jsonl:1: not a usable item: the correct form 'nope'"):
            list(read_release(tmp_path / "pairs.jsonl"))

    def test_release_row_of_a_nonce_variant(self, release):
        variants = [r for r in rows_of(release / "it" / "pairs.jsonl") if r["variant"]]
        assert variants and {r["perturbation"] for r in variants} == {"nonce"}
        assert all(r["sentence_good"] != r["sentence_bad"] for r in variants)
        item = next(it for it in read_release(release / "it") if it.variant)
        again = release_row(item, Source("it", {"it_toy": "CC BY-NC-SA 4.0", "it_other": "CC BY-SA 4.0"}))
        assert again == next(r for r in variants if r["item_id"] == item.item_id and r["variant"] == item.variant)


class TestAsATestSet:
    @pytest.mark.parametrize("where", ["", "it", "it/pairs.jsonl", "it/pairs.parquet"])
    def test_detected_and_read(self, release, where):
        pytest.importorskip("pyarrow", reason="pyarrow is not installed")
        path = release / where if where else release
        assert detect_testset(path)[0] == "release"
        ts = load_testset(path)
        assert len(ts.items) == len(rows_of(release / "it" / "pairs.jsonl"))   # Maltese has none
        assert ts.info and "of 1 language(s) (it)" in ts.info[0]

    def test_blimp_is_still_blimp(self, tmp_path):
        (tmp_path / "p.jsonl").write_text(json.dumps({"sentence_good": "The cat runs.", "sentence_bad": "The cat run.",
                                                      "UID": "x", "pairID": "0"}) + "\n")
        assert detect_testset(tmp_path / "p.jsonl")[0] == "blimp"

    def test_agree_score_reads_the_release(self, release, tmp_path):
        sentences = [" ".join(it.tokens) for it in read_items(release / "it")]
        model = unigram(tmp_path / "uni", sentences)
        for method in ("target", "sentence"):
            r = run_agree("score", release, "--model", model, "--method", method, "--out", tmp_path / method, "-q")
            assert r.exit_code == 0, r.output
            scored = (tmp_path / method / "items.tsv").read_text().splitlines()
            assert len(scored) - 1 == len(rows_of(release / "it" / "pairs.jsonl"))
            manifest = json.loads((tmp_path / method / "manifest.json").read_text())
            assert any(i["path"].endswith("it/pairs.jsonl") for i in manifest["inputs"])

    def test_datasets_loads_it(self, release, tmp_path, monkeypatch):
        datasets = pytest.importorskip("datasets", reason="datasets is not installed")
        monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
        every = datasets.load_dataset("json", data_files=str(release / "*" / "pairs.jsonl"), split="train",
                                      cache_dir=str(tmp_path / "hf"))
        rows = rows_of(release / "it" / "pairs.jsonl")
        assert every.num_rows == len(rows) and set(every.column_names) == set(FIELDS)
        assert every[0]["sentence_good"] == rows[0]["sentence_good"] and every[0]["tokens"] == rows[0]["tokens"]
        card = datasets.load_dataset(str(release), "it", split="train", cache_dir=str(tmp_path / "hf2"))
        assert card.num_rows == len(rows)          # the datasheet's configs


class TestCard:
    def test_index_columns_and_datasheet(self, release):
        index = read_index(release / "index.tsv")
        assert list(index[0])[:7] == ["language", "name", "treebanks", "sentences", "items", "items_with_nonce",
                                      "nonce_variants"]
        assert list(index[0])[-5 - len(COUNT_COLUMNS):] == ["scored_by_sentence", *COUNT_COLUMNS, "license",
                                                            "noncommercial", "reason", "notes"]
        assert "subj_verb_number" in index[0] and "adj_noun_gender" in index[0]
        card = (release / "README.md").read_text()
        assert card.startswith("---\npretty_name: ") and "- config_name: \"it\"\n  data_files: \"it/pairs.jsonl\"" in card
        assert "- config_name: \"mt\"" not in card                      # no pairs, no config
        assert yaml_front_matter(card)["configs"][1] == {"config_name": "it", "data_files": "it/pairs.jsonl"}
        assert "| it_toy | Italian (it) | UD_Italian-Toy |  | CC BY-NC-SA 4.0 | **NC** |" in card
        assert "| it_other | Italian (it) |" in card and "| CC BY-SA 4.0 |  |" in card
        assert "agree extract-all" in card and "seed 1111" in card

    def test_norwegian_stays_a_string_in_the_front_matter(self):
        row = IndexRow("no", "Norwegian", ("no_bokmaal",), 10, 3, 3, 27)
        card = datasheet(ReleaseCard("ud", (row,), (), (), {}, "agree extract-all ud", "0", False))
        meta = yaml_front_matter(card)
        assert meta["language"] == ["no"] and meta["configs"][1]["config_name"] == "no"

    def test_datasheet_is_deterministic(self, release, tmp_path):
        extract_languages(RunContext(COMMAND, out=tmp_path / "again"), ud_folder(tmp_path / "ud"), n=3, exclude=("wo",))
        for name in ("README.md", "index.tsv"):
            mine = (tmp_path / "again" / name).read_text().replace(str(tmp_path / "ud"), "UD")
            theirs = (release / name).read_text()
            theirs = theirs.replace(str(release.parent / "ud"), "UD")
            assert mine == theirs, name


class TestUdFolder:
    def test_names_and_languages(self, tmp_path):
        assert treebank_of(tmp_path / "it_isdt-ud-test.conllu.gz") == ("it_isdt", "it")
        assert treebank_of(tmp_path / "hyw_armtdp-ud-dev.conllu") == ("hyw_armtdp", "hyw")
        assert treebank_of(tmp_path / "test.conllu") is None
        assert treebank_of(tmp_path / "Italian_x-ud-test.conllu") is None

    @pytest.mark.parametrize("text, licence", [
        ("Attribution-NonCommercial-ShareAlike 3.0 Unported licence.\n...Attribution-ShareAlike 3.0", "CC BY-NC-SA 3.0"),
        ("see http://creativecommons.org/licenses/by-sa/4.0/legalcode", "CC BY-SA 4.0"),
        ("CC BY-SA 3.0\n", "CC BY-SA 3.0"),
        ("Creative Commons BY-NC-SA 3.0", "CC BY-NC-SA 3.0"),
        ("GNU Lesser General Public License For Linguistic Resources", "LGPL-LR"),
        ("Copyright the authors", ""),
    ])
    def test_licence_in_text(self, text, licence):
        assert licence_in_text(text) == licence

    def test_sources_disagreeing_keep_every_reading_and_nc_wins(self, tmp_path):
        tb = tmp_path / "ud" / "et_ewt"
        tb.mkdir(parents=True)
        (tb / "et_ewt-ud-test.conllu").write_text("")
        (tb / "LICENSE.txt").write_text("Attribution-ShareAlike 4.0 International")
        (tmp_path / "ud" / "TREEBANKS.md").write_text(
            "# x\n\n| folder | language | UD repository | commit | licence |\n|---|---|---|---|---|\n"
            "| et_ewt | Estonian | UD_Estonian-EWT | 018e4ff | CC BY-NC-SA 4.0 (LICENSE.txt says CC BY-SA 4.0) |\n")
        (t,) = read_ud_folder(tmp_path / "ud").treebanks
        assert (t.language_name, t.repository, t.commit) == ("Estonian", "UD_Estonian-EWT", "018e4ff")
        assert t.licence == "CC BY-NC-SA 4.0 (LICENSE.txt: CC BY-SA 4.0)" and t.noncommercial

    def test_table_of_a_release_folder(self, tmp_path):
        (tmp_path / "T.md").write_text("| folder | licence |\n|---|---|\n| a_b | MIT |\n\ntext\n| x | y |\n")
        assert read_treebank_table(tmp_path / "T.md") == {"a_b": {"folder": "a_b", "licence": "MIT"}}

    @pytest.mark.integration
    def test_the_shared_folder(self, shared):
        folder = read_ud_folder(shared("ud"))
        by = {t.name: t for t in folder.treebanks}
        assert len(by) == 65 and len({t.language for t in folder.treebanks}) == 64 and not folder.skipped
        assert by["it_isdt"].noncommercial and by["it_partut"].noncommercial and by["el_gdt"].noncommercial
        assert not by["en_ewt"].noncommercial and by["en_ewt"].licence == "CC BY-SA 4.0"
        assert by["fro_profiterole"].licence == "CC BY-NC-SA 3.0 (LICENSE.txt: CC BY-SA 4.0)"
        assert by["gl_treegal"].licence == "LGPL-LR" and by["ga_idt"].licence == "CC BY-SA 3.0"
        assert sum(t.noncommercial for t in folder.treebanks) == 16
