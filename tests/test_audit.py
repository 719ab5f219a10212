"""agree audit draw / read: a seeded stratified sheet from a release, and the
valid-rate table of a judged sheet (agreement.extraction.audit)."""
from __future__ import annotations

import csv
import json

import pytest

from agreement.extraction.audit import (REQUIRED, SHEET_COLUMNS, SHEET_FILE, draw_sheet, read_sheet,
                                        valid_rates)
from conftest import run_agree
from formats.errors import AgreeError

STRATA = {"de": [("subj-verb", "Number", "Hunde", "bellen", "bellt", "Plur", "Sing"),
                 ("subj-verb", "Person", "Hunde", "bellen", "bellst", "3", "2"),
                 ("det-noun", "Number", "die", "Hunde", "Hund", "Plur", "Sing")],
          "fr": [("subj-verb", "Number", "chiens", "aboient", "aboie", "Plur", "Sing")]}


def release_row(lang, stratum, k, variant):
    relation, feature, cue, good, bad, value, wrong_value = stratum
    tokens = [cue, good, str(k), "."]
    sentence = f"{cue} {good} {k}."
    return {"attractors": 0, "cue": cue, "cue_index": 0, "distance": 1, "feature": feature,
            "item_id": f"{lang}_tb-ud-test:s{k}:0-1:{feature}", "language": lang, "lemma": good,
            "license": "CC BY-SA 4.0", "one_prefix_method": True, "one_prefix_prefix": cue,
            "one_prefix_word_bad": bad, "one_prefix_word_good": good,
            "perturbation": "original" if variant == 0 else "nonce", "relation": relation, "scoring": "target",
            "sentence_bad": f"{cue} {bad} {k}.", "sentence_good": sentence, "sentence_id": f"s{k}",
            "split": "test", "target_index": 1, "target_side": "after", "tokens": tokens,
            "treebank": f"{lang}_tb", "value": value, "variant": variant,
            "wrong_source": f"{lang}_tb-ud-test" if variant == 0 else "paradigms", "wrong_value": wrong_value}


@pytest.fixture
def release(tmp_path):
    root = tmp_path / "release"
    for lang, strata in STRATA.items():
        (root / lang).mkdir(parents=True)
        with open(root / lang / "pairs.jsonl", "w", encoding="utf-8") as fh:
            for s, stratum in enumerate(strata):
                for k in range(10):
                    for variant in range(3):
                        fh.write(json.dumps(release_row(lang, stratum, 100 * s + k, variant), ensure_ascii=False,
                                            sort_keys=True) + "\n")
    return root


def test_draw_is_stratified_and_seeded(release):
    rows = draw_sheet(release, n_orig=6, n_nonce=3, seed=5)
    de = [r for r in rows if r.language == "de" and r.kind == "original"]
    assert len(de) == 6
    assert sorted((r.relation, r.feature) for r in de).count(("subj-verb", "Number")) == 2   # 2 per stratum
    assert len([r for r in rows if r.language == "fr" and r.kind == "nonce"]) == 3
    assert rows == draw_sheet(release, n_orig=6, n_nonce=3, seed=5)
    assert rows != draw_sheet(release, n_orig=6, n_nonce=3, seed=6)
    r = de[0]
    assert r.sentence_good.startswith("[Hunde] {bellen}") or r.sentence_good.startswith("[die] {Hunde}")
    assert r.wrong_source == "de_tb-ud-test" and r.verdict == ""


def test_draw_and_read_cli(release, tmp_path):
    out = tmp_path / "audit"
    result = run_agree("audit", "draw", release, "--n-orig", 4, "--n-nonce", 2, "--seed", 3, "--out", out, "-q")
    assert result.exit_code == 0, result.output + result.stderr
    assert (out / "sheet.md").read_text(encoding="utf-8").startswith("# Audit sheet")
    first = (out / SHEET_FILE).read_bytes()
    assert run_agree("audit", "draw", release, "--n-orig", 4, "--n-nonce", 2, "--seed", 3, "--out", out,
                     "-q").exit_code == 0
    assert (out / SHEET_FILE).read_bytes() == first       # byte-identical for a seed
    with open(out / SHEET_FILE, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert tuple(rows[0]) == SHEET_COLUMNS and len(rows) == 12
    verdicts = ["valid", "v", "questionable", "invalid", "", "valid"]
    for row, v in zip(rows, verdicts * 2):
        row["verdict"] = v
    judged = tmp_path / "judged.tsv"
    with open(judged, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, SHEET_COLUMNS, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    result = run_agree("audit", "read", judged, "--out", tmp_path / "rates", "-q")
    assert result.exit_code == 0, result.output + result.stderr
    table = {(r[0], r[1]): r[2:] for r in (line.split("\t") for line in result.stdout.splitlines()[1:])}
    # de originals are rows 1-4: valid, v, questionable, invalid
    assert table["de", "original"] == ["4", "2", "1", "1", "0.5000"]
    assert table["all", "original"][:2] == ["8", "4"]
    assert table["all", "nonce"][:2] == ["2", "2"]    # rows 5 and 11 not judged: counted nowhere
    assert (tmp_path / "rates" / "valid_rates.md").is_file()


def test_unknown_verdict_is_one_error_line(tmp_path):
    sheet = tmp_path / "sheet.tsv"
    sheet.write_text("\t".join(REQUIRED) + "\nde-o-01\tde\toriginal\tmaybe\n", encoding="utf-8")
    result = run_agree("audit", "read", sheet, "--out", tmp_path / "rates")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: {sheet}:2: unknown verdict 'maybe' (expected valid, questionable or invalid, or v, q, i; "
        "empty: not judged)"]
    assert not (tmp_path / "rates").exists()


def test_missing_column_is_one_error_line(tmp_path):
    sheet = tmp_path / "sheet.tsv"
    sheet.write_text("id\tlanguage\tkind\nde-o-01\tde\toriginal\n", encoding="utf-8")
    result = run_agree("audit", "read", sheet, "--out", tmp_path / "rates")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {sheet}: not an audit sheet: no verdict column")


def test_not_a_release_is_one_error_line(tmp_path):
    (tmp_path / "empty").mkdir()
    result = run_agree("audit", "draw", tmp_path / "empty", "--out", tmp_path / "audit")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [f"Error: {tmp_path / 'empty'}: no pairs.jsonl in it or in its "
                                                  "language directories"]


def test_questionable_is_not_valid():
    rows = read_sheet_rows([("a-o-01", "a", "original", "questionable"), ("a-o-02", "a", "original", "valid")])
    (a, everything) = valid_rates(rows)
    assert (a.judged, a.valid, a.rate) == (2, 1, 0.5) and everything.language == "all"


def read_sheet_rows(rows):
    from agreement.extraction.audit import SheetRow
    return [SheetRow(i, lang, kind, "", "", "", "", "", "", "", "", "", "", "", 0, verdict)
            for i, lang, kind, verdict in rows]


def test_read_sheet_refuses_unknown_kind(tmp_path):
    sheet = tmp_path / "sheet.tsv"
    sheet.write_text("\t".join(REQUIRED) + "\nx\tde\tswap\tvalid\n", encoding="utf-8")
    with pytest.raises(AgreeError, match="unknown kind 'swap'"):
        read_sheet(sheet)


def test_an_out_holding_my_file_is_refused_before_the_release_is_read(tmp_path):
    """--out holding a file of the user's: refused first (the release here is not even one),
    the file kept; --out inside the release: refused."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("my thesis")
    (tmp_path / "empty").mkdir()
    r = run_agree("audit", "draw", tmp_path / "empty", "--out", mine)
    assert r.exit_code == 1 and "holds thesis.tex" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert (mine / "thesis.tex").read_text() == "my thesis"


def test_an_out_inside_the_release_is_refused(release, tmp_path):
    r = run_agree("audit", "draw", release, "--out", release / "sheet")
    assert r.exit_code == 1 and "lies inside the input" in r.stderr
    assert not (release / "sheet").exists()
