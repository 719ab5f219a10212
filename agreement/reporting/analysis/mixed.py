"""Logistic mixed-effects model of item correctness (statsmodels).

``correct ~ nonce + model + model:attractors + (1 | item) + (1 | construction)``
(one attractor slope per model, so each model's attractor effect has its own
sign and interval, from one joint fit).

Estimator, in two steps:

1. Point estimates: ``statsmodels.genmod.bayes_mixed_glm.BinomialBayesMixedGLM.fit_vb``,
   a Bayesian logistic GLMM fitted by mean-field variational Bayes, with Gaussian
   priors (fixed effects sd 2 on the log-odds scale of the standardised columns,
   log random-effect sds sd 1: statsmodels' defaults; weak against thousands of
   items). It is the only GLMM in statsmodels (its ``MixedLM`` is linear, its GEE
   gives no random effects), it takes crossed random intercepts (item and
   construction are not nested), and it scales to ~50,000 rows with a sparse
   random-effects design. Its posterior means of the fixed effects and random-effect
   sds are the estimates reported.
2. Intervals of the fixed effects: the Laplace approximation at those estimates.
   Mean-field VB assumes the fixed effects independent of the random effects a
   posteriori, so its posterior sds leave out exactly the uncertainty that
   random intercepts add to a fixed effect (an attractor count varies between
   items, so its slope trades off with the item intercepts): in simulation its
   95% intervals held 59 and 65 of 80 true coefficients (74%, 81%; 20 data sets
   of 400 items x 5 variants, and of 80 x 6). Here the
   covariance of the fixed effects is the fixed-effect block of the inverse
   Hessian of the log posterior over (fixed effects, random effects), with the
   random-effect sds at their estimates: Cov = (X'WX + P_f - X'WZ (Z'WZ + P_r)^-1
   Z'WX)^-1, W the binomial weights mu(1-mu) at the fitted linear predictor, P the
   prior precisions, computed with one sparse LU factorisation (so it scales like
   the VB fit). It is lme4's ``vcov`` for a GLMM (conditional on the variance
   components), and the linear-response correction of mean-field VB (Giordano,
   Broderick and Jordan 2018) for a near-Gaussian posterior. In simulation
   (``tests/test_analysis.py``) these intervals held 74 and 78 of the same 80
   (92%, 98%). Why not the alternatives: statsmodels' ``fit_map`` (the joint
   posterior mode) let the item sd collapse to 0 and the estimates drift far off on
   those simulations (nonce +0.66 for a true -0.5), and its dense numerical Hessian
   takes one gradient per random effect (35-60 s on 4,000 rows); an item bootstrap
   refits the model once per replicate and cannot resample
   the handful of constructions. The random-effect sds keep VB's intervals
   (exp of the posterior mean of log sd +/- 1.96 posterior sd), which run narrow.

``item`` is (test set, item_id): an original sentence and its nonce variants
share it, so the item effect absorbs the sentence frame. ``nonce`` is 1 for nonce
variants; ``attractors[M]`` is model M's change in log-odds per attractor; model
terms are dummies against the first model (log-odds ratio of being right, the
paired comparison of two models over the same items, items as random effects). A term
that does not vary in the data (one condition, one model, one construction) is
left out and said in ``dropped``. ``intercept`` is the log-odds of being right at
the mean of the other terms (statsmodels centres them while fitting).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from formats.scored import ScoredTable

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Coefficient:
    """A fixed effect (log-odds scale) or a random-effect sd, with its 95% interval."""
    term: str
    estimate: float
    sd: float
    lo: float
    hi: float

    @property
    def sign(self) -> str:
        """``+`` / ``-`` when the interval excludes 0, else ``0``."""
        return "+" if self.lo > 0 else "-" if self.hi < 0 else "0"


@dataclass(frozen=True)
class MixedFit:
    """One fitted model: what it was fitted on and its coefficients."""
    label: str
    formula: str
    n_rows: int
    n_items: int
    n_constructions: int
    fixed: tuple[Coefficient, ...]
    random_sd: tuple[Coefficient, ...]
    dropped: tuple[str, ...] = field(default=())

    def term(self, name: str) -> Coefficient | None:
        return next((c for c in self.fixed if c.term == name), None)


def _codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    _, inv = np.unique(values.astype(str), return_inverse=True)
    return inv, int(inv.max()) + 1 if inv.size else 0


def _design(table: ScoredTable):
    """Fixed-effect matrix and names, and the terms left out because they do not vary."""
    cols, names, dropped = [np.ones(len(table))], ["intercept"], []
    nonce = (table.condition == "nonce").astype(float)
    if 0 < nonce.sum() < len(table):
        cols.append(nonce)
        names.append("nonce")
    else:
        dropped.append("nonce (one condition only)")
    models = table.models()
    for m in models[1:]:
        cols.append((table.model == m).astype(float))
        names.append(f"model[{m}] vs {models[0]}")
    if len(models) == 1:
        dropped.append("model (a single model)")
    att = table.attractors.astype(float)
    for m in models:  # one attractor slope per model: the model x attractors interaction
        col = np.where(table.model == m, att, 0.0)
        if np.ptp(col[table.model == m]) > 0:
            cols.append(col)
            names.append(f"attractors[{m}]")
        else:
            dropped.append(f"attractors[{m}] (constant)")
    return np.column_stack(cols), names, dropped


#: A random-effect sd above this (log-odds) means the variational fit ran away
#: (seen with a handful of constructions and a near-perfect model: sd ~100);
#: the component is then dropped and the model refitted without it.
MAX_RANDOM_SD = 10.0


def _vc_design(table: ScoredTable, components: list[str]):
    """Sparse 0/1 random-intercept design, its component index per column, level counts."""
    from scipy import sparse  # with statsmodels: part of the optional extra

    keys = {"item": table.item_keys(),
            "construction": np.char.add(np.char.add(table.testset.astype(str), "\x1f"),
                                        table.construction.astype(str))}
    cols, ident, levels, offset = [], [], {}, 0
    for j, name in enumerate(components):
        codes, n = _codes(keys[name])
        cols.append(codes + offset)
        ident.append(np.full(n, j))
        levels[name] = n
        offset += n
    rows = np.concatenate([np.arange(len(table))] * len(cols))
    exog_vc = sparse.csr_matrix((np.ones(rows.size), (rows, np.concatenate(cols))),
                                shape=(len(table), offset))
    return exog_vc, np.concatenate(ident), levels


def _fit(table: ScoredTable, exog, names, components):
    # statsmodels is imported here, not at module top: it is an optional extra
    # ("agree-bench[analysis]") and takes a second to import
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    exog_vc, ident, levels = _vc_design(table, components)
    glmm = BinomialBayesMixedGLM(table.correct.astype(float), exog, exog_vc, ident,
                                 fep_names=names, vcp_names=components)
    # scale_fe: statsmodels centres and scales the fixed effects while fitting (the fit
    # is unstable without it) and reports them back on the original scale. A fixed
    # start (every posterior sd exp(-0.5), statsmodels' typical random start) instead
    # of its random one: the same data give the same fit, no seed involved.
    n = exog.shape[1] + len(components) + exog_vc.shape[1]
    res = glmm.fit_vb(fit_method="L-BFGS-B", scale_fe=True, sd=np.full(n, np.exp(-0.5)))
    return res, levels, glmm, exog_vc, ident


def _laplace_fe_sd(glmm, exog, exog_vc, ident, res) -> np.ndarray:
    """Posterior sds of the fixed effects from the Laplace approximation at the VB estimates.

    The negative log posterior's Hessian over (fixed effects, random effects), with
    the random-effect sds held at exp(vcp_mean): [X Z]' W [X Z] + prior precisions.
    X is the design as fit_vb(scale_fe=True) used it (every column but the intercept
    centred; centring is why the intercept is at the mean of the other terms), on the
    original scale of the coefficients. The fixed-effect block of its inverse is
    solved from one sparse LU factorisation (X has a handful of columns, Z one per
    item and construction), never formed densely."""
    from scipy import sparse  # with statsmodels: part of the optional extra
    from scipy.sparse.linalg import splu

    sc = exog.std(0)
    scaled = sc > 1e-8  # the columns statsmodels centred and scaled (not the intercept)
    x = exog - np.where(scaled, exog.mean(0), 0.0)
    eta = x @ res.fe_mean + exog_vc @ res.vc_mean
    w = 0.5 / (1.0 + np.cosh(eta))  # mu (1 - mu) of the logistic, without overflow
    # prior precisions: statsmodels' N(0, fe_p^2) is on the scaled coefficient
    # (beta * sd of its column), N(0, exp(vcp)^2) on each random effect
    prior_fe = np.where(scaled, sc, 1.0) ** 2 / glmm.fe_p ** 2
    prior_vc = np.exp(-2.0 * np.asarray(res.vcp_mean)[ident])
    a = sparse.hstack([sparse.csc_matrix(x), exog_vc]).tocsc()
    hess = (a.T @ sparse.diags(w) @ a + sparse.diags(np.concatenate([prior_fe, prior_vc]))).tocsc()
    k = exog.shape[1]
    unit = np.zeros((hess.shape[0], k))
    unit[np.arange(k), np.arange(k)] = 1.0
    cov = splu(hess).solve(unit)[:k]
    return np.sqrt(np.diag(cov))


def fit_mixed(table: ScoredTable, *, label: str = "all models") -> MixedFit:
    """Fit the module's model on ``table``'s rows (see the module doc)."""
    exog, names, dropped = _design(table)
    components = ["item"]
    if len(np.unique(table.construction.astype(str))) > 1:
        components.append("construction")
    else:
        dropped.append("construction effect (one construction)")
    while True:
        with warnings.catch_warnings():  # overflow inside statsmodels' quadrature on a runaway fit
            warnings.simplefilter("ignore", RuntimeWarning)
            res, levels, glmm, exog_vc, ident = _fit(table, exog, names, components)
        sds = np.exp(res.vcp_mean)
        bad = [c for c, sd in zip(components, sds) if not sd <= MAX_RANDOM_SD]
        if not bad or len(components) == 1:
            break
        worst = components[int(np.nanargmax(np.where(np.isfinite(sds), sds, np.inf)))]
        dropped.append(f"{worst} effect (variational fit diverged: sd {float(np.max(sds)):.3g} "
                       f"over {levels[worst]} levels; refitted without it)")
        components.remove(worst)
    fe_sd = _laplace_fe_sd(glmm, exog, exog_vc, ident, res)
    fixed = tuple(Coefficient(n, float(m), float(s), float(m - Z95 * s), float(m + Z95 * s))
                  for n, m, s in zip(names, res.fe_mean, fe_sd))
    # vcp_mean/vcp_sd are the posterior of log(sd): report sd = exp(.) with its interval
    rand = tuple(Coefficient(n, float(np.exp(m)), float(s), float(np.exp(m - Z95 * s)),
                             float(np.exp(m + Z95 * s)))
                 for n, m, s in zip(components, res.vcp_mean, res.vcp_sd))
    terms = [n for n in names if n == "nonce"]
    terms += ["model"] if any(n.startswith("model[") for n in names) else []
    terms += ["model:attractors"] if any(n.startswith("attractors[") for n in names) else []
    formula = "correct ~ " + " + ".join(terms + [f"(1|{v})" for v in components])
    return MixedFit(label, formula, len(table), levels["item"], levels.get("construction", 1),
                    fixed, rand, tuple(dropped))


def attractor_effects(fit: MixedFit) -> dict[str, Coefficient]:
    """model -> its attractor slope (log-odds per attractor) from the joint fit."""
    return {c.term[len("attractors["):-1]: c for c in fit.fixed if c.term.startswith("attractors[")}
