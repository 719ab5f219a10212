"""Relation mining on real UD treebanks of ../shared/data/ud (skipped when absent):
counts with margins, a subject layer (Georgian), two folders of one language pooled
(Italian), and the treebanks without features, each with its reason."""
from __future__ import annotations

from collections import Counter

import pytest

from agreement.extraction.extract import ExtractConfig, extract_items
from agreement.extraction.relations import reason_text
from agreement.extraction.validity import check_items


def mine(*dirs):
    return extract_items(list(dirs), ExtractConfig(mode="relations"))


def cells(result):
    return Counter((it.relation, it.feature) for it in result.items)


def test_czech_every_relation(shared):
    r = mine(shared("ud", "cs_cac"))
    c = cells(r)
    assert 1400 <= len(r.items) <= 1800
    assert 250 <= c[("subj-verb", "Number")] <= 400 and c[("adj-noun", "Gender")] >= 400
    assert c[("subj-pred", "Gender")] >= 20 and c[("det-noun", "Number")] >= 40
    assert r.filters["coordinated"] > 50 and r.filters["relative_or_interrogative"] > 50
    assert r.report.excluded_values.get("Gender=Fem,Neut", 0) > 0  # multi-valued genders counted, left out
    v = check_items(r.items, r.paradigms)
    assert v.share("correct_is_token") == 1.0 and v.share("wrong_closest") == 1.0


def test_georgian_subject_layer(shared):
    c = cells(mine(shared("ud", "ka_glc")))
    assert c[("subj-verb", "Number[subj]")] >= 150 and c[("subj-verb", "Person[subj]")] >= 5


def test_italian_two_treebanks_pooled(shared):
    r = mine(shared("ud", "it_isdt"), shared("ud", "it_partut"))
    sources = Counter(it.wrong_source for it in r.items)
    assert len(r.items) >= 20000 and cells(r)[("subj-verb", "Number")] >= 1400
    # some isdt items take their wrong form from another file of the language
    assert sum(it.wrong_source != it.item_id.split(":")[0] for it in r.items) > 100
    assert set(sources) <= {"it_isdt-ud-dev", "it_isdt-ud-test", "it_partut-ud-train", "it_partut-ud-dev",
                            "it_partut-ud-test"}


@pytest.mark.parametrize("folder, says", [
    ("mt_mudt", "no token carries Gender or Number or Person"),
    ("fro_profiterole", "no token carries Gender or Number or Person"),
    ("af_afribooms", "none with Number or Person on both ends"),
])
def test_treebanks_without_items_say_why(shared, folder, says):
    r = mine(shared("ud", folder))
    assert not r.items and says in reason_text(r.reason)
