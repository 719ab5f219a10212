"""The bootstrap's resamples in blocks when one draw would not fit in memory."""
import numpy as np

from agreement.reporting import stats


def test_a_small_draw_gives_the_numbers_one_draw_gives():
    """Under the block size the interval is the one of a single (n_boot, n) draw."""
    a = np.random.default_rng(0).random(301)
    rng = np.random.default_rng(5)
    means = a[rng.integers(0, a.size, size=(200, a.size))].mean(axis=1)
    want = tuple(float(x) for x in np.quantile(means, [0.025, 0.975]))
    assert stats.bootstrap_ci(a, np.random.default_rng(5), n_boot=200) == want


def test_blocks_are_reproducible_and_agree_with_one_draw(monkeypatch):
    """Over the block size: the same seed, the same interval; and the interval is the
    one-draw interval up to resampling noise."""
    a = (np.random.default_rng(1).random(4001) > 0.4).astype(float)
    whole = stats.bootstrap_ci(a, np.random.default_rng(2), n_boot=1000)
    monkeypatch.setattr(stats, "BOOT_CELLS", 30_000)   # 7 rows of 4,001 a block
    first = stats.bootstrap_ci(a, np.random.default_rng(2), n_boot=1000)
    again = stats.bootstrap_ci(a, np.random.default_rng(2), n_boot=1000)
    assert first == again
    assert abs(first[0] - whole[0]) < 0.01 and abs(first[1] - whole[1]) < 0.01
