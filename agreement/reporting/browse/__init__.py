"""``agree browse``: a static results page of ``agree score`` runs (summary, a filtered
and sorted table of every scored pair, one item's detail) that opens from ``file://``
with no server and no network. :mod:`.runs` reads the score directories,
:mod:`.columns` builds the page's data, :mod:`.site` writes the page, :mod:`.headless`
drives Debian's chromium to check it (tests, benchmark, the docs' screenshot)."""
