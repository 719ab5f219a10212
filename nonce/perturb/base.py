"""The perturbation interface: one :class:`Aspect` subclass per file, found by name.

An aspect turns one item into a noisier copy of itself. It never touches the cue
or the target (their forms, POS and features stay as they are, so the agreement
the item tests is intact); it may change, delete, insert or merge other tokens
through a :class:`Draft`, which keeps ``pos``/``feats`` aligned with ``tokens``
and recomputes ``cue_index``/``target_index`` whenever the token count before
them changes.

Adding an aspect is adding one module to this package with a class decorated by
:func:`register`; :func:`aspect_names` imports every module of the package, so
nothing else needs editing.

Severity: every noise aspect takes a probability in [0, 1] (per word, per
space, per article ... as each aspect's ``severity_meaning`` says) where 0
leaves every item unchanged. ``semantic`` is the exception: its severity is the
target cosine similarity in [-1, 1] and 1 is the identity.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

from formats.detok import attaches_left, space_after as rule_spacing
from formats.items import Item
from nonce.errors import NonceError
from treebanks.errors import literal

#: where the words an aspect may change are taken from (cue and target always excluded)
SCOPES = ("prefix", "context", "sentence")


@dataclass(frozen=True)
class Option:
    """One aspect option: its default, its type and, when closed, its allowed values."""
    default: Any
    help: str
    type: Callable[[str], Any] = str
    choices: tuple = ()

    def convert(self, aspect: str, name: str, value: Any) -> Any:
        if isinstance(value, (str, os.PathLike)) and self.type is not str:
            try:
                value = self.type(value)
            except (TypeError, ValueError):
                kind = "a number" if self.type is float else "a whole number"
                raise NonceError(f"{aspect}: option {name}={value!r} is not {kind}") from None
        if self.choices and value not in self.choices:
            raise NonceError(f"{aspect}: option {name}={value!r} not allowed "
                             f"(choose from: {', '.join(map(str, self.choices))})")
        return value


def _optional_int(value: Any) -> int | None:
    return None if value in (None, "", "none") else int(value)


#: options every aspect understands
COMMON_OPTIONS = {
    "scope": Option("prefix", "which words may change besides cue and target: 'prefix' "
                    "(before the target: the only words a left-to-right LM sees), 'context' "
                    "(strictly between cue and target) or 'sentence'", choices=SCOPES),
    "lang": Option(None, "language code (en, it) for language-aware aspects"),
}


class Draft:
    """A mutable copy of one item's tokens that keeps POS, features, the spacing of
    the text as written and the cue and target positions consistent under replace /
    delete / insert / merge."""

    def __init__(self, item: Item):
        self.item = item
        self.tokens = list(item.tokens)
        self.spaces = list(item.spacing)
        self.pos = list(item.pos)
        self.feats = list(item.feats)
        self.cue = item.cue_index
        self.target = item.target_index
        if not (len(self.tokens) == len(self.pos) == len(self.feats)):
            raise NonceError(f"item {item.item_id}: tokens, pos and feats have different lengths "
                             f"({len(self.tokens)}, {len(self.pos)}, {len(self.feats)})")
        if not (0 <= self.cue < len(self.tokens) and 0 <= self.target < len(self.tokens)):
            raise NonceError(f"item {item.item_id}: cue_index {self.cue} or target_index "
                             f"{self.target} outside its {len(self.tokens)} tokens")

    def __len__(self) -> int:
        return len(self.tokens)

    def protected(self, i: int) -> bool:
        return i in (self.cue, self.target)

    def scope(self, scope: str) -> list[int]:
        """Indices an aspect may change, in sentence order (cue and target excluded)."""
        if scope == "prefix":
            span = range(0, self.target)
        elif scope == "context":
            lo, hi = sorted((self.cue, self.target))
            span = range(lo + 1, hi)
        else:
            span = range(len(self.tokens))
        return [i for i in span if not self.protected(i)]

    def _guard(self, *indices: int) -> None:
        for i in indices:
            if self.protected(i):
                raise NonceError(f"internal error: an aspect tried to change the cue or target "
                                 f"of item {self.item.item_id}")

    def replace(self, i: int, form: str, pos: str | None = None, feats: str | None = None) -> None:
        self._guard(i)
        self.tokens[i] = form
        if pos is not None:
            self.pos[i] = pos
        if feats is not None:
            self.feats[i] = feats

    def delete(self, i: int) -> None:
        self._guard(i)
        if i > 0:  # the gap after the deleted word now follows the word before it
            self.spaces[i - 1] = self.spaces[i]
        self._drop(i)

    def _drop(self, i: int) -> None:
        del self.tokens[i], self.pos[i], self.feats[i], self.spaces[i]
        self.cue -= self.cue > i
        self.target -= self.target > i

    def insert(self, i: int, form: str, pos: str, feats: str = "_") -> None:
        """Insert a token so that it becomes index ``i`` (the token there moves right); a
        mark written against the word before it (``,``: :func:`formats.detok.attaches_left`)
        takes that word's space, any other token is followed by one."""
        space = True
        if i > 0 and attaches_left(form):
            space, self.spaces[i - 1] = self.spaces[i - 1], False
        self.tokens.insert(i, form)
        self.pos.insert(i, pos)
        self.feats.insert(i, feats)
        self.spaces.insert(i, space if i < len(self.spaces) else False)
        self.cue += self.cue >= i
        self.target += self.target >= i

    def merge(self, i: int) -> None:
        """Join tokens i and i+1 into one (a dropped space). The merged token keeps the
        POS and features of the right-hand word, which in the common cases (determiner +
        noun, preposition + pronoun) is the head of the pair."""
        self._guard(i, i + 1)
        self.tokens[i + 1] = self.tokens[i] + self.tokens[i + 1]
        self._drop(i)   # the space between them is gone; the merged word keeps the one after

    def to_item(self, perturbation: str, changes: int) -> Item:
        before, after = self.item, self
        if (after.tokens[after.cue], after.tokens[after.target]) != (
                before.tokens[before.cue_index], before.tokens[before.target_index]):
            raise NonceError(f"internal error: cue or target of item {before.item_id} changed")
        punct = before.punct
        had = "PUNCT" in before.pos[min(before.cue_index, before.target_index) + 1:
                                    max(before.cue_index, before.target_index)]
        has = "PUNCT" in self.pos[min(self.cue, self.target) + 1:max(self.cue, self.target)]
        if had != has:  # only then: otherwise keep the extractor's own flag as it was
            punct = has
        spaces = tuple(self.spaces[:-1]) + (False,) if self.spaces else ()
        return before.replace(tokens=tuple(self.tokens), pos=tuple(self.pos), feats=tuple(self.feats),
                              cue_index=self.cue, target_index=self.target, punct=punct,
                              space_after=None if spaces == rule_spacing(self.tokens) else spaces,
                              perturbation=perturbation, extra={**before.extra, "changes": changes})


class Aspect(ABC):
    """One kind of perturbation at one severity. Subclasses set the class attributes
    and implement :meth:`perturb`; options arrive validated in ``self.options``."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    severity_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    severity_meaning: ClassVar[str] = "a per-word probability"
    #: the severity at which items come out unchanged (the curve's starting point)
    identity_severity: ClassVar[float] = 0.0
    #: x-axis label of robustness curves
    axis_label: ClassVar[str] = "severity (per-word probability)"
    #: aspect-specific options (COMMON_OPTIONS are added)
    options_spec: ClassVar[dict[str, Option]] = {}
    #: whether the token count may change (tests hold every aspect to this)
    changes_length: ClassVar[bool] = False

    def __init__(self, severity: float, options: dict[str, Any] | None = None):
        lo, hi = self.severity_range
        try:
            severity = float(severity)
        except (TypeError, ValueError):
            raise NonceError(f"{self.name}: severity {severity!r} is not a number") from None
        if not lo <= severity <= hi:
            raise NonceError(f"{self.name}: severity {severity:g} out of range; "
                             f"it is {self.severity_meaning} in [{lo:g}, {hi:g}]")
        self.severity = severity
        self.options = self._validate(options or {})

    @classmethod
    def all_options(cls) -> dict[str, Option]:
        return {**COMMON_OPTIONS, **cls.options_spec}

    def _validate(self, given: dict[str, Any]) -> dict[str, Any]:
        spec = self.all_options()
        unknown = sorted(k for k, v in given.items() if k not in spec and v is not None)
        if unknown:
            raise NonceError(f"{self.name}: unknown option(s) {', '.join(unknown)} "
                             f"(options: {', '.join(sorted(spec))})")
        return {k: (opt.default if given.get(k) is None else opt.convert(self.name, k, given[k]))
                for k, opt in spec.items()}

    def condition(self) -> str:
        """The variant of the aspect written after ``@`` in the label ('' for none)."""
        return ""

    def label(self) -> str:
        """``aspect[@condition]:severity``, e.g. ``qwerty@nouns:0.2`` or ``swap:0.3``."""
        cond = self.condition()
        return f"{self.name}{'@' + cond if cond else ''}:{self.severity:g}"

    def prepare(self, items: Sequence[Item]) -> None:
        """Build whatever the aspect needs from the whole test set (default: nothing)."""

    def language(self, items: Sequence[Item], known: Sequence[str]) -> str:
        """The ``lang`` option, else the language code that starts the item ids
        (``en_ewt-ud-train:s12:3`` -> ``en``); it must be one of ``known``."""
        lang = self.options.get("lang")
        if lang is None:
            guesses = {item.item_id.split("_", 1)[0].split("-", 1)[0].lower() for item in items}
            lang = guesses.pop() if len(guesses) == 1 else None
        if lang not in known:
            raise NonceError(f"{self.name}: language {literal(lang or 'unknown')} not supported "
                             f"(pass {{lang}} with one of: {', '.join(known)})", fields=True)
        return lang

    @abstractmethod
    def perturb(self, draft: Draft, rng: Callable[[str], random.Random]) -> int:
        """Change ``draft`` in place; return the number of changes made.

        ``rng(purpose)`` gives a ``random.Random`` seeded from (seed, item, purpose):
        draws for different purposes do not shift one another, which is what lets a
        random control reproduce the word count of the POS group it controls."""


class ModeAspect(Aspect):
    """An aspect whose ``mode`` option (in its :attr:`options_spec`) is its condition:
    ``articles@swap:0.3``, ``marks@insert:0.2``."""

    def condition(self) -> str:
        return self.options["mode"]


_REGISTRY: dict[str, type[Aspect]] = {}
_DISCOVERED = False


def register(cls: type[Aspect]) -> type[Aspect]:
    """Class decorator: make an aspect available under ``cls.name``."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    # every module of this folder but the machinery registers one aspect (plugins: found
    # by listing the folder, so adding an aspect touches no list)
    for module in pkgutil.iter_modules([os.path.dirname(__file__)]):
        if module.name not in ("base", "apply", "select", "__init__"):
            importlib.import_module(f"nonce.perturb.{module.name}")
    _DISCOVERED = True


def aspect_names() -> list[str]:
    _discover()
    return sorted(_REGISTRY)


def get_aspect(name: str) -> type[Aspect]:
    """The aspect class called ``name``; an unknown name is a NonceError listing them."""
    _discover()
    if name not in _REGISTRY:
        raise NonceError(f"unknown aspect {name!r} (aspects: {', '.join(aspect_names())})")
    return _REGISTRY[name]
