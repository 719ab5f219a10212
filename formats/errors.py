"""The error of this layer and of the agreement layer above it.

``AgreeError`` is defined here, not in ``agreement``, because the readers of test
sets, scores and manifests live here and must not import upward; ``agreement.errors``
hands the same class on."""
import functools

from treebanks.errors import DomainError


class AgreeError(DomainError):
    """A user-facing error about agree's files (test sets, scores, manifests, --out)."""


def names_undecodable(reader):
    """Decorate ``reader(path, ...)`` so that a file that is not UTF-8 is an error
    naming that file (the CLI edge alone cannot know which file it was)."""
    @functools.wraps(reader)
    def wrapper(path, *args, **kwargs):
        try:
            return reader(path, *args, **kwargs)
        except UnicodeDecodeError as e:
            raise AgreeError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    return wrapper
