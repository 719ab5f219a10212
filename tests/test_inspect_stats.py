"""The probes' logistic regression and the inspection intervals (agreement/inspection/logistic.py,
conditions.py)."""
from __future__ import annotations

import numpy as np
import pytest

from agreement.inspection.conditions import cluster_ci
from agreement.inspection.logistic import cross_validate, fit, folds_of, predict


def test_newton_reaches_the_minimum_of_the_regularised_loss():
    """The same objective minimised by scipy's L-BFGS gives the same weights."""
    optimize = pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5))
    y = (X @ np.array([1.0, -2.0, 0.5, 0.0, 0.0]) + rng.normal(size=80) > 0).astype(int)
    mean, scale, w = fit(X, y, l2=1.0)
    Z = np.hstack([(X - mean) / scale, np.ones((80, 1))])
    s = np.where(y > 0, 1.0, -1.0)

    def loss(v):
        return np.logaddexp(0, -s * (Z @ v)).sum() + 0.5 * v[:-1] @ v[:-1]

    ref = optimize.minimize(loss, np.zeros(6), method="L-BFGS-B", options={"gtol": 1e-10}).x
    assert np.allclose(w, ref, atol=1e-4)


def test_a_separable_number_is_read_perfectly_and_noise_is_not():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    X = rng.normal(size=(200, 20))
    X[:, 3] += 4 * (2 * y - 1)
    groups = np.array([f"item{i // 4}" for i in range(200)], dtype=object)
    folds = folds_of(groups, 5, rng)
    assert (cross_validate(X, y, folds) == y).all()
    noise = rng.normal(size=(200, 20))
    assert abs(np.mean(cross_validate(noise, y, folds) == y) - 0.5) < 0.15
    assert (predict(fit(X, y), X) == y).all()


def test_folds_keep_an_items_variants_together():
    groups = np.array([f"item{i % 7}" for i in range(70)], dtype=object)
    folds = folds_of(groups, 3, np.random.default_rng(0))
    for g in set(groups):
        assert len(set(folds[groups == g])) == 1
    assert set(folds) == {0, 1, 2}


def test_the_cluster_bootstrap_is_wider_when_variants_repeat_their_item():
    rng = np.random.default_rng(0)
    per_item = rng.integers(0, 2, 40).astype(float)
    repeated = np.repeat(per_item, 10)                        # 10 identical variants per item
    groups = np.repeat([f"i{k}" for k in range(40)], 10)
    lo, hi = cluster_ci(repeated, groups, np.random.default_rng(1))
    naive_lo, naive_hi = cluster_ci(repeated, np.arange(400).astype(str), np.random.default_rng(1))
    assert lo <= repeated.mean() <= hi
    assert (hi - lo) > 2 * (naive_hi - naive_lo)
    assert cluster_ci(np.array([]), np.array([]), rng) != cluster_ci(np.array([]), np.array([]), rng)  # NaNs
