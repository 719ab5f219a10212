"""formats.digests: a file's sha256, kept on disk only for the very bytes it was computed from."""
import hashlib
import os
import time

import pytest

from formats import digests


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """Every file cached (no size floor, no settling time), the process memory empty."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(digests, "MIN_CACHED_BYTES", 1)
    monkeypatch.setattr(digests, "SETTLED_SECONDS", 0.0)
    monkeypatch.setattr(digests, "_SEEN", {})
    return tmp_path / "xdg" / "agree" / "sha256"


def _entries(cache):
    return sorted(p for p in cache.iterdir() if not p.name.startswith(".")) if cache.is_dir() else []


def test_the_digest_is_the_files_and_is_kept(tmp_path, cache):
    f = tmp_path / "model.pt"
    f.write_bytes(b"weights" * 1000)
    assert digests.sha256_of(f) == hashlib.sha256(f.read_bytes()).hexdigest()
    [entry] = _entries(cache)
    assert entry.read_text().strip() == hashlib.sha256(f.read_bytes()).hexdigest()


def test_an_entry_is_read_back_until_the_file_is_written(tmp_path, cache, monkeypatch):
    f = tmp_path / "model.pt"
    f.write_bytes(b"one")
    digests.sha256_of(f)
    [entry] = _entries(cache)
    entry.write_text("f" * 64 + "\n")                 # what the next process finds
    monkeypatch.setattr(digests, "_SEEN", {})
    assert digests.sha256_of(f) == "f" * 64
    time.sleep(0.05)                                  # past the file system clock's tick
    f.write_bytes(b"two")                             # same size, new ctime: a new entry
    monkeypatch.setattr(digests, "_SEEN", {})
    assert digests.sha256_of(f) == hashlib.sha256(b"two").hexdigest()


def test_a_damaged_entry_is_ignored(tmp_path, cache, monkeypatch):
    f = tmp_path / "model.pt"
    f.write_bytes(b"bytes")
    digests.sha256_of(f)
    [entry] = _entries(cache)
    entry.write_text("not a digest")
    monkeypatch.setattr(digests, "_SEEN", {})
    assert digests.sha256_of(f) == hashlib.sha256(b"bytes").hexdigest()


@pytest.mark.parametrize("why", ["small", "racy", "off"])
def test_no_entry_for_small_racy_or_with_the_cache_off(tmp_path, cache, monkeypatch, why):
    f = tmp_path / "model.pt"
    f.write_bytes(b"bytes")
    if why == "small":
        monkeypatch.setattr(digests, "MIN_CACHED_BYTES", 1 << 20)
    elif why == "racy":   # changed just now: a write within the clock's tick could follow
        monkeypatch.setattr(digests, "SETTLED_SECONDS", 3600.0)
    else:
        monkeypatch.setenv("AGREE_DIGEST_CACHE", "0")
    assert digests.sha256_of(f) == hashlib.sha256(b"bytes").hexdigest()
    assert _entries(cache) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_cache_that_cannot_be_written_costs_only_the_hashing(tmp_path, cache):
    cache.parent.mkdir(parents=True)
    cache.parent.chmod(0o500)
    try:
        f = tmp_path / "model.pt"
        f.write_bytes(b"bytes")
        assert digests.sha256_of(f) == hashlib.sha256(b"bytes").hexdigest()
    finally:
        cache.parent.chmod(0o700)


def test_a_cache_path_that_is_a_file_costs_only_the_hashing(tmp_path, cache):
    cache.parent.mkdir(parents=True)
    cache.write_text("my notes")                     # a file where the directory would go
    f = tmp_path / "model.pt"
    f.write_bytes(b"bytes")
    assert digests.sha256_of(f) == hashlib.sha256(b"bytes").hexdigest()
    assert cache.read_text() == "my notes"
