"""L2-regularised logistic regression (torch, float64; the diagnostic classifier of the probes).

Minimises ``sum_i log(1 + exp(-y_i (w.x_i + b))) + (l2 / 2) |w|^2`` (labels y in {-1, +1},
the intercept not penalised) by Newton's method with a backtracking step: the Hessian
``X' S X + l2 I`` of a few hundred features is solved exactly, so a fit takes a few
iterations and its result does not depend on a learning rate or a seed. Features are
standardised with the training rows' mean and standard deviation, so ``l2 = 1`` means
the same on every layer (scikit-learn's default ``C = 1`` on standardised features).

The algebra runs on one torch thread (:func:`one_thread`): a 577 x 577 solve took 1.7 s
with numpy's multi-threaded OpenBLAS on a busy 2-core machine and 8 ms on one thread.
"""
from __future__ import annotations

import contextlib

import numpy as np
import torch

#: Newton iterations at most, and the change of the loss that ends them
MAX_ITER = 50
TOL = 1e-7


@contextlib.contextmanager
def one_thread():
    """torch at one CPU thread for the block (small dense algebra: threads only wait)."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _loss(X1, y, w, l2) -> float:
    z = y * (X1 @ w)
    return float(torch.logaddexp(torch.zeros_like(z), -z).sum() + 0.5 * l2 * (w[:-1] @ w[:-1]))


def fit(X: np.ndarray, y01: np.ndarray, l2: float = 1.0):
    """(mean, scale, weights with the intercept last) of a fit on rows ``X`` (n, d)
    and 0/1 labels ``y01``, as numpy arrays."""
    X = np.asarray(X, dtype=np.float64)
    mean, scale = X.mean(0), X.std(0)
    scale[scale == 0] = 1.0
    with one_thread():
        X1 = torch.from_numpy(np.hstack([(X - mean) / scale, np.ones((len(X), 1))]))
        y = torch.from_numpy(np.where(np.asarray(y01) > 0, 1.0, -1.0))
        d = X1.shape[1]
        reg = torch.full((d,), float(l2), dtype=torch.float64)
        reg[-1] = 0.0
        w = torch.zeros(d, dtype=torch.float64)
        loss = _loss(X1, y, w, l2)
        for _ in range(MAX_ITER):
            p = torch.sigmoid(-y * (X1 @ w))
            grad = -(X1.T @ (y * p)) + reg * w
            hess = (X1.T * (p * (1.0 - p))) @ X1 + torch.diag(reg + 1e-10)
            step = torch.linalg.solve(hess, grad)
            t = 1.0
            while t > 1e-4:
                new = _loss(X1, y, w - t * step, l2)
                if new <= loss:
                    break
                t *= 0.5
            w = w - t * step
            done = loss - new < TOL * max(1.0, abs(loss))
            loss = new
            if done:
                break
    return mean, scale, w.numpy()


def predict(model, X: np.ndarray) -> np.ndarray:
    """0/1 predictions of a :func:`fit` for rows ``X``."""
    mean, scale, w = model
    z = ((np.asarray(X, dtype=np.float64) - mean) / scale) @ w[:-1] + w[-1]
    return (z > 0).astype(np.int64)


def folds_of(groups: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """A fold number per row, whole groups (an item and its variants) in one fold,
    groups dealt to folds in an order drawn by ``rng``."""
    names = sorted(set(groups.tolist()))
    order = rng.permutation(len(names))
    fold_of = {names[j]: r % k for r, j in enumerate(order)}
    return np.array([fold_of[g] for g in groups.tolist()], dtype=np.int64)


def cross_validate(X: np.ndarray, y: np.ndarray, folds: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """Out-of-fold 0/1 predictions for every row (a fold with one class in its training
    rows predicts that class)."""
    out = np.zeros(len(y), dtype=np.int64)
    for f in np.unique(folds):
        test, train = folds == f, folds != f
        if len(np.unique(y[train])) < 2:
            out[test] = int(y[train][0]) if train.any() else 0
            continue
        out[test] = predict(fit(X[train], y[train], l2), X[test])
    return out
