"""Check that the items of agree extract / agree nonce directories are what they claim
(:mod:`agreement.extraction.validity`): per directory, the share of originals whose
correct form is the treebank's token and whose wrong form is an attested form of the
same lemma and POS contrasting the feature only (or as the closest rule allows), and
the share of nonce variants whose replaced words and target pair keep the features.

    .venv/bin/python scripts/check_items.py cs-rel cs-nonce ...

Each directory is read with its own paradigms.tsv; a directory that is not an agree
extract or nonce output is one ``Error: ...`` line and exit code 1.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agreement.extraction.validity import check_items  # noqa: E402
from formats.errors import AgreeError  # noqa: E402
from formats.items import read_items  # noqa: E402
from treebanks.errors import DomainError  # noqa: E402
from treebanks.paradigms import PARADIGMS_FILE, ParadigmTable  # noqa: E402


def main(argv=None) -> int:
    dirs = sys.argv[1:] if argv is None else argv
    if not dirs:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        for d in dirs:
            path = Path(d)
            if not (path / PARADIGMS_FILE).is_file():
                raise AgreeError(f"{path}: no {PARADIGMS_FILE} (not an agree extract or nonce directory)")
            print(f"{path}: {check_items(read_items(path), ParadigmTable.load(path)).line()}")
    except (DomainError, OSError) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
