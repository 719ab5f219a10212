"""``agree browse``'s page in a real browser: Debian's chromium, headless, driven over
the DevTools pipe (:mod:`agreement.reporting.browse.headless`). The page opens from
``file://``, a filter narrows the rows to the count items.tsv gives, the rows shown are
those rows, an item's detail marks its cue and target, and the page asks the network
for nothing. Skipped, saying why, where chromium is absent."""
from __future__ import annotations

import pytest

from agreement.reporting.browse.headless import Chromium, find_chromium
from conftest import run_agree
from browse_fixtures import make_items, score_runs, scored_rows  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(find_chromium() is None,
                                reason="chromium is absent (apt-get install chromium; scripts/install_chromium.sh)")


@pytest.fixture(scope="module")
def page(score_runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "page"
    dirs = [score_runs[k] for k in ("uni", "kn") if k in score_runs]
    r = run_agree("browse", *dirs, "--out", out, "-q")
    assert r.exit_code == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def browser():
    with Chromium(width=1300, height=900) as c:
        yield c


def _choose(browser, key: str, value: str) -> None:
    """Pick an option of a filter's select as a person would (its change event)."""
    browser.evaluate(f"(() => {{ const s = document.getElementById('f-{key}'); s.value = {value!r}; "
                     "s.dispatchEvent(new Event('change')); })()")


def _shown(browser) -> list[str]:
    """The item ids of the rows rendered, top to bottom, once their words have loaded."""
    browser.wait_for("!agreeBrowse.pending()")
    return browser.evaluate("Array.from(document.querySelectorAll('#rows .row .c-id')).map(e => e.textContent)")


def test_filter_rows_detail_and_no_network(browser, page, score_runs):
    browser.requests.clear()
    browser.open(page / "index.html")
    browser.wait_for("window.agreeBrowse && agreeBrowse.ready")
    items = make_items()
    assert browser.evaluate("+document.getElementById('count').dataset.n") == len(items)
    assert _shown(browser) == [it.item_id for it in items]
    # the unigram model wrong on nonce variants: the rows items.tsv says, in its order
    uni = scored_rows(score_runs["uni"])
    want = [(r["item_id"], r["variant"]) for r in uni if r["correct"] == "0" and r["undecidable"] == "0"
            and r["variant"] != "0"]
    assert want, "the fixture should give the unigram some wrong nonce rows"
    model = uni[0]["model"]
    k = browser.evaluate(f"Array.from(document.querySelectorAll('#filters label')).findIndex(l => "
                         f"l.firstChild.textContent === {model!r})")
    key = browser.evaluate(f"document.querySelectorAll('#filters label')[{k}].querySelector('select').dataset.key")
    _choose(browser, key, "0")
    _choose(browser, "condition", str(browser.evaluate("AGREE_META.dicts.condition.indexOf('nonce')")))
    assert browser.evaluate("+document.getElementById('count').dataset.n") == len(want)
    assert _shown(browser) == [i for i, _ in want]
    # open the first row's detail: cue and target marked in both sentences
    browser.evaluate("document.querySelector('#rows .row').click()")
    browser.wait_for("!!document.querySelector('#detail .pair')")
    first = next(it for it in items if (it.item_id, str(it.variant)) == want[0])
    marks = browser.evaluate("['good', 'bad-s'].map(c => ['cue', 'target', 'attractor'].map(m => "
                             "Array.from(document.querySelectorAll('#detail .pair .' + c + ' .w.' + m))"
                             ".map(e => e.textContent)))")
    assert marks[0][0] == marks[1][0] == [first.tokens[first.cue_index]]
    assert marks[0][1] == [first.correct] and marks[1][1] == [first.wrong]
    assert marks[0][2] == [first.tokens[i] for i in range(first.cue_index + 1, first.target_index)
                           if first.pos[i] == "NOUN"]
    assert browser.evaluate("document.querySelectorAll('#detail table.variants tr[data-row]').length") == 3
    assert browser.evaluate("document.querySelectorAll('#detail .surp .w[title]').length") > 0
    # sorting by the first model's margin: the same rows, in the order of their margins
    browser.evaluate("agreeBrowse.setSort('margin0', true)")
    browser.wait_for("!agreeBrowse.pending()")
    margins = browser.evaluate("Array.from(document.querySelectorAll('#rows .row')).map(r => "
                               "parseFloat(r.querySelector('.c-m').textContent))")
    assert len(margins) == len(want) and margins == sorted(margins)
    assert browser.outside_requests() == []
    assert any(u.endswith("/data/columns.js") for u in browser.requests)
