"""agreement.reporting.stats: accuracy, bootstrap intervals, exact McNemar, correlations."""
from __future__ import annotations

import math

import numpy as np
import pytest

from agreement.reporting.paired import mcnemar_test, paired_tests
from agreement.reporting.stats import accuracy, bootstrap_ci, mcnemar_exact, mean_sd, pearson, spearman
from formats.items import Item
from tests.scored_rows import row, table


class TestAccuracy:
    def test_mean_of_right_and_wrong(self):
        assert accuracy([True, False, True, True]) == 0.75

    def test_empty_is_nan(self):
        assert math.isnan(accuracy([]))

    def test_mean_sd_is_sample_sd(self):
        mean, sd = mean_sd([0.9, 0.8, 0.7])
        assert mean == pytest.approx(0.8)
        assert sd == pytest.approx(0.1)  # ddof=1

    def test_single_model_has_zero_sd(self):
        assert mean_sd([0.5]) == (0.5, 0.0)


class TestBootstrap:
    def test_same_seed_same_interval(self):
        values = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 5
        a = bootstrap_ci(values, np.random.default_rng(7))
        b = bootstrap_ci(values, np.random.default_rng(7))
        assert a == b

    def test_interval_brackets_the_mean(self):
        values = [1] * 70 + [0] * 30
        lo, hi = bootstrap_ci(values, np.random.default_rng(1))
        assert lo < 0.7 < hi
        # binomial standard error sqrt(.7*.3/100) = 0.046: a 95% interval is about +-0.09
        assert 0.13 < hi - lo < 0.23

    def test_constant_values_give_a_point(self):
        assert bootstrap_ci([1, 1, 1], np.random.default_rng(0)) == (1.0, 1.0)

    def test_more_items_narrower(self):
        rng = np.random.default_rng(3)
        small = bootstrap_ci([1, 0] * 10, rng)
        large = bootstrap_ci([1, 0] * 500, rng)
        assert large[1] - large[0] < (small[1] - small[0]) / 4

    def test_no_items(self):
        assert all(math.isnan(x) for x in bootstrap_ci([], np.random.default_rng(0)))


class TestMcNemar:
    def test_no_discordant_items(self):
        assert mcnemar_exact(0, 0) == 1.0

    def test_all_discordant_one_way(self):
        # 5 of 5 discordant items favour A: p = 2 * (1/2)^5
        assert mcnemar_exact(5, 0) == pytest.approx(0.0625)

    def test_known_value(self):
        # n = 12, k = 2: 2 * (C(12,0) + C(12,1) + C(12,2)) / 2^12 = 2 * 79 / 4096
        assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096)

    def test_symmetric_and_capped(self):
        assert mcnemar_exact(2, 10) == mcnemar_exact(10, 2)
        assert mcnemar_exact(4, 4) == 1.0

    def test_thousands_of_items_stay_exact(self):
        p = mcnemar_exact(600, 400)
        # normal approximation: z = 200 / sqrt(1000) = 6.32 -> two-sided p ~ 2.5e-10
        assert 1e-11 < p < 1e-9

    def test_paired_test_counts_discordant_items(self):
        a = {1: True, 2: True, 3: False, 4: True, 5: False}
        b = {1: True, 2: False, 3: True, 4: False, 6: True}
        t = mcnemar_test(_outcomes({"A": a, "B": b}), "A", "B")
        assert (t.rows, t.only_a, t.only_b) == (5 - 1, 2, 1)  # key 5 / 6 not shared
        assert t.accuracy_a == 0.75 and t.accuracy_b == 0.5
        assert t.mcnemar_p == mcnemar_exact(2, 1)

    def test_every_pair_once(self):
        scored = _outcomes({m: {1: True, 2: False} for m in "abc"})
        assert [(t.model_a, t.model_b) for t in paired_tests(scored, list("abc"), ["original"])] == [
            ("a", "b"), ("a", "c"), ("b", "c")]


def _outcomes(per_model: dict) -> object:
    """Scored rows of ``{model: {item number: right?}}`` (original items)."""
    def item(k):
        return Item(f"s{k}", 0, "NOUN VERB", "L", ("the", "dog", "runs"), ("DET", "NOUN", "VERB"),
                    ("_",) * 3, "runs", "run", "run", "Sing", 1, 2, 0, False)
    return table(row(item(k), m, m, "lstm", -1.0, -2.0 if ok else -0.5)
                 for m, outcomes in per_model.items() for k, ok in outcomes.items())


class TestCorrelation:
    def test_pearson_linear(self):
        assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
        assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)

    def test_spearman_is_one_for_any_increasing_relation(self):
        x = [0.1, 0.2, 0.5, 0.9]
        assert spearman(x, [v ** 5 for v in x]) == pytest.approx(1.0)
        assert pearson(x, [v ** 5 for v in x]) < 0.99

    def test_spearman_ties_get_average_ranks(self):
        # ranks of [1, 1, 2] are [1.5, 1.5, 3]
        assert spearman([1, 1, 2], [1.5, 1.5, 3]) == pytest.approx(1.0)

    def test_constant_is_nan(self):
        assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
