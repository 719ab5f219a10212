"""Per-language tokenisation rules: where a language's UD treebank cuts words
otherwise than the generic rules of :mod:`lm.corpus.tokenize`.

One :class:`LangRules` record per language code in :data:`RULES`; a language
absent from it gets :data:`GENERIC`. Every field defaults to the generic
behaviour, so a record names only what its treebank does differently. Each rule
is justified by ``benchmarks/tokenizer_agreement.py`` (share of the treebank's
surface tokens reproduced from its ``# text`` lines; ``docs/corpora.md`` has the
table) and states a convention of the language's orthography or of its UD
treebank, never a list of one test file's words.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Mapping


@dataclass(frozen=True, eq=False)
class LangRules:
    """How one language's UD treebank cuts words (all fields optional).

    Words are the runs of letters and digits the generic token pattern finds;
    an apostrophe between two letters is inside a word (``O'Brien``), one at
    either end is punctuation unless a rule below attaches it.
    """
    #: abbreviations that never end a sentence (lower-cased, with their period: ``mr.``)
    titles: frozenset[str] = frozenset()
    #: abbreviations that keep their period and may end a sentence (``etc.``)
    abbrevs: frozenset[str] = frozenset()
    #: whole words cut into pieces (looked up lower-cased; pieces keep the word's
    #: letters: ``cannot`` -> ``can not``, Arabic ``لها`` -> ``ل ها``)
    fused: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: a word matching one of these (in order) is cut into the match's non-empty
    #: groups, when the first of them is letters (``do|n't``, Arabic ``و|ال...``)
    splits: tuple[re.Pattern, ...] = ()
    #: a prefix ending in an apostrophe, cut off a word and kept as a token
    #: (``dell'|anno``); applied again to the rest (``qu'|l'|...``)
    elision: re.Pattern | None = None
    #: words the elision rule leaves whole (lower-cased, ``'`` apostrophe)
    elision_whole: frozenset[str] = frozenset()
    #: with ``elision``: a final ``'s`` is an English possessive (``Martha 's``)
    possessive_s: bool = False
    #: words that keep an apostrophe written right after them (Italian ``po'``,
    #: Maltese ``ta'``, Scottish Gaelic ``a’``) when what follows the apostrophe
    #: matches ``apostrophe_final_next``
    apostrophe_final: re.Pattern | None = None
    #: by default anything but a letter or digit; ``_SPACE_NEXT`` where an
    #: apostrophe before punctuation closes a quotation ('Gaoir nam Ban Muileach',)
    apostrophe_final_next: re.Pattern = re.compile(r"(?![^\W_])")
    #: words that keep an apostrophe written right before them (Scottish Gaelic
    #: ``'s``, Maltese ``'l``) when a space or the start of the text precedes
    #: it, and the word is not capitalised inside the text (``'Gaoir``: a quotation)
    apostrophe_initial: re.Pattern | None = None
    #: ``"split"``: a hyphen between words is a token (``well - known``);
    #: ``"keep"``: hyphenated words stay whole (``war-raok``)
    hyphen: str = "split"
    #: (split) hyphenated words kept whole anyway, lower-cased (``e-mail``)
    hyphen_whole: frozenset[str] = frozenset()
    #: (split) first parts that stay attached with their hyphen (``non-profit``)
    hyphen_prefixes: frozenset[str] = frozenset()
    #: first parts cut off with their hyphen (Maltese article: ``il-|kampanja``)
    hyphen_proclitics: re.Pattern | None = None
    #: (keep) last parts cut off with their hyphen, lower-cased (Breton
    #: ``bloaz|-mañ``), unless the whole word is in ``hyphen_whole``
    hyphen_enclitics: frozenset[str] = frozenset()
    #: numbers with slashes (``94/55/CE``): ``"split"`` at the slashes (ISDT) or
    #: ``"keep"`` whole (EWT: ``9/11``)
    slashed_numbers: str = "split"
    #: extra token patterns, tried before all others (Old French ``.VII.``)
    extra_tokens: str = ""
    #: whether a sentence starts with a capital; False for a language whose script
    #: Unicode gives lower-case letters but that writes no capitals (Georgian)
    cased: bool = True
    #: tokens that end a sentence besides the generic end marks (Armenian texts
    #: type the full stop ``։`` as a colon)
    sentence_marks: frozenset[str] = frozenset()


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _any_of(words: str) -> re.Pattern:
    """A case-insensitive pattern matching any of the words."""
    return re.compile("(?i)(?:" + "|".join(map(re.escape, words.split())) + ")")


#: Hyphenated spellings the treebanks keep whole.
_HYPHEN_WHOLE = _words("e-mail e-mails x-ray t-shirt t-shirts co-op")
#: A word of letters only.
_LETTERS = re.compile(r"[^\W\d_]+")
#: A space or the end of the text.
_SPACE_NEXT = re.compile(r"\s|$")

GENERIC = LangRules(hyphen_whole=_HYPHEN_WHOLE)


def _rules(**fields) -> LangRules:
    return replace(GENERIC, **fields)


# English (UD EWT): clitics split as UD words (do n't), the paper's convention.
_EN = _rules(
    titles=_words("mr. mrs. ms. dr. prof. st. sen. rep. gov. gen. col. lt. capt. sgt. mt. ft. "
                  "rev. hon. pres. messrs. no. nos. vs. v. cf. fig. figs. vol. pp. p. ca. approx. "
                  "jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. nov. dec."),
    abbrevs=_words("etc. inc. ltd. co. corp. jr. sr. bros. e.g. i.e. a.m. p.m. dept. univ. est. "
                   "assn. ave. blvd. rd. ph.d. u.s. u.k. d.c. al."),
    fused={"cannot": ("can", "not"), "gonna": ("gon", "na"), "wanna": ("wan", "na"),
           "gotta": ("got", "ta"), "gimme": ("gim", "me"), "dunno": ("dun", "no")},
    splits=(re.compile(r"(?i)^(.+?)(n['’]t|['’](?:s|m|re|ve|ll|d))$"),),
    # prefixes that UD EWT keeps attached with their hyphen (non-profit, re-elect)
    hyphen_prefixes=_words("e non anti pre re mid post co ex pro multi counter semi sub inter intra "
                           "mis over under neo bi tri micro macro mega mini quasi ultra"),
    slashed_numbers="keep",
)
#: English with clitics kept: UD 2.16 EWT's surface tokens (``don't``), and the
#: plural possessive keeps its apostrophe (``teachers'``).
EN_SURFACE = replace(_EN, fused={}, splits=(), apostrophe_final=re.compile(r".*[sS]", re.S))

# Italian, French, Catalan: an elided article, preposition or pronoun keeps its
# apostrophe and is a token (l'|ordine, qu'|il); ISDT's articulated prepositions
# (della) are surface tokens and stay whole.
_ELISION = re.compile(r"(?i)^([^\W\d_]+['’])(?=[^\W_])")
_ROMANCE = _rules(elision=_ELISION, possessive_s=True)
_IT = replace(
    _ROMANCE,
    titles=_words("sig. sigg. sig.ra dott. dott.ssa prof. prof.ssa avv. ing. on. sen. mons. "
                  "s. ss. sant. art. artt. n. nn. p. pp. cap. capp. vol. fig. cfr. ca. lett. "
                  "c.d. d.lgs. l. ord. gen. es. att. distr. tel. dr. mr. st. "
                  "feb. mar. apr. giu. lug. ago. set. ott. nov. dic. v."),
    abbrevs=_words("ecc. ss. sgg. spa. s.p.a. s.r.l. d.c. a.c. ca. ed. rist. trad."),
    # words written with a final apostrophe (truncation or informal accent: po', E')
    apostrophe_final=_any_of("po mo e de be di fa va sta da to l un dell all nell sull dall quell "
                             "bell sant c d s m t v n quest anch tutt"),
)

# Old French (PROFITEROLE): French elision; numerals between periods (.VII., .iiij.m.)
_FRO = replace(_ROMANCE, extra_tokens=r"(?i:\.(?:[ivxlcdmj]+\.)+)(?![^\W_])")

# Breton (KEB): hyphenated words whole (war-raok, kêr-benn) but the demonstrative
# and pronoun enclitics split off (ar bloaz|-mañ, an dra|-se), except in a few
# lexicalised adverbs; ne and da elide (N'|eo, d'|ober) except da before an
# article or possessive (d'ar, d'he: one surface token); c'h is a letter; a
# colloquial elided word keeps its apostrophe ('vit, 'ta, 'zo).
_BR = _rules(
    elision=re.compile(r"(?i)^([nd]['’])(?=[^\W_])"),
    elision_whole=_words("d'ar d'an d'al d'am d'va d'da d'e d'he d'hon d'hor d'hol d'ho d'o"),
    apostrophe_initial=_LETTERS,
    hyphen="keep",
    hyphen_enclitics=_words("mañ se hont me te eñ hi ni int"),
    hyphen_whole=_HYPHEN_WHOLE | _words("goude-se evel-se kement-se ouzhpenn-se dre-se hep-se hag-eñ"),
)

# Scottish Gaelic (ARCOSG): hyphenated words whole (a-steach, h-uile, t-ainm); an
# apostrophe marking an elided letter stays with its word, at the end (a’, bh')
# or at the start ('s, 'ga, 'dol).
_GD = _rules(hyphen="keep", apostrophe_final=_LETTERS, apostrophe_final_next=_SPACE_NEXT,
             apostrophe_initial=_LETTERS)

# Maltese (MUDT): the article, alone or fused with a preposition, keeps its
# hyphen and is a token (il-|kampanja, tal-|Partit, fl-|aħħar, iż-|żejt); other
# hyphenated words stay whole (14-il); a final apostrophe (elided għ) stays with
# its word (ta', jista'); a one-letter elision is a token (f'|post, b'|hekk);
# 'l and 'il keep their apostrophe.
_MT = _rules(
    hyphen="keep",
    hyphen_proclitics=re.compile(
        r"(?i)(?:ta|fi|f|bi|b|ma|mi|mil|għa|għal|li|lil|sa|bħa|bħal|bha|bhal|ġo|da|di)?"
        r"i?(?:l|ċ|d|n|r|s|t|x|z|ż)"),
    apostrophe_final=_LETTERS,
    apostrophe_final_next=_SPACE_NEXT,
    apostrophe_initial=re.compile(r"(?i)l|il"),
    elision=re.compile(r"(?i)^([^\W\d_]['’])(?=[^\W_])"),
)


def _arabic() -> LangRules:
    """Arabic (PUD writes clitics as words of their own, with no multiword token):
    the conjunctions و/ف and the prepositions ب/ك/ل before the article (و|ال...,
    ب|ال..., ل|ل... for li + al-), و before an imperfective verb (و|يظهر), and
    closed-class words with their clitics: prepositions and particles with a
    suffixed pronoun (لها -> ل ها, عليه -> علي ه), و/ف before a function word
    (وهو, فإن), ب/ل before a demonstrative or particle (لذلك, بأن), ب before the
    nouns that make compound prepositions (بسبب, بشكلٍ), the future س and the ل
    of purpose before the auxiliaries (سيكون, ليكون). Open-class words are left
    whole: without a lexicon, وزير 'minister' cannot be told from و + a word."""
    pronouns = "ه ها هم هما هن ك كم كما كن نا ي ني".split()
    # the form a host takes before a suffix (على -> علي ه)
    hosts = "ب ل في من عن علي إلي مع لدي عند أن إن لكن نفس أنفس كل بعض بين منذ حول ضد".split()
    function = ("هو هي هم هما هن أنا نحن أنت هذا هذه ذلك تلك هؤلاء التي الذي الذين قد لا لم لن ما من في "
                "مع على عن إلى أن إن كان كانت كانوا يكون تكون لكن بين حتى غير كل بعد قبل إذا عندما حيث أو "
                "ثم منذ").split()
    after_preposition = "هذا هذه ذلك تلك هؤلاء ما لا كل أن".split()
    auxiliaries = "يكون تكون يكونون نكون أكون يتم تتم يصبح تصبح".split()
    # forms of the paradigm that are more often another word: لكن 'but', نفسي
    # 'psychological', كلي 'total'; في + ي is written في
    homographs = {"لكن", "نفسي", "كلي", "فيي"}
    fused: dict[str, tuple[str, ...]] = {}
    for host in hosts:
        for p in pronouns:
            if host + p not in homographs:
                fused[host + p] = (host, p)
    for w in function:
        for conj in "وف":
            fused[conj + w] = (conj, w)
    for prep in "بل":
        for w in after_preposition:
            fused[prep + w] = (prep, w)
        for p in pronouns:
            fused[prep + "أن" + p] = (prep, "أن", p)  # بأنها
    for w in auxiliaries:
        for particle in "سل":  # the future س, the ل of purpose
            fused[particle + w] = (particle, w)
    fused.update({"مما": ("م", "ما"), "ممن": ("م", "من")})  # من + ما, assimilated
    compound = "شأن سبب شكل اسم حيث حلول حسب فضل واسطة نسبة"
    marks = "\u064b-\u0652"  # case endings (tanween) a compound may carry: بشكلٍ
    return _rules(fused=fused, splits=(
        re.compile(rf"^(و?)(ب)((?:{'|'.join(compound.split())})[{marks}]*)$"),
        re.compile(r"^([وف]?)([بك]?)(ال.{2,})$"),
        re.compile(r"^([وف]?)(ل)(ل.{2,})$"),
        re.compile(r"^(و)([يتنأ].{2,})$"),
    ))


# Georgian (GLC): the generic word rules; Mkhedruli has no capitals to start a sentence
_KA = _rules(cased=False)
# Armenian, Western Armenian (ArmTDP): the generic word rules; ":" typed for the full stop ։
_HY = _rules(sentence_marks=frozenset({":"}))

RULES: dict[str, LangRules] = {
    "en": _EN, "it": _IT, "fr": _ROMANCE, "ca": _ROMANCE, "fro": _FRO,
    "br": _BR, "gd": _GD, "mt": _MT, "ar": _arabic(), "ka": _KA,
    "hy": _HY, "hyw": _HY,
}

#: Languages whose UD treebank the generic rules reproduce to 95% or more
#: (``benchmarks/tokenizer_agreement.py``, ``docs/corpora.md``), and Hebrew,
#: whose acronyms (``צה"ל``) the generic rules keep whole.
GENERIC_MEASURED = _words("ab af am be bg bxr cop cs cu da de el es et fo ga gl got grc gv he hi hr "
                          "hsb hu is kk kmr kpv krl la lv mdf mk mr myv nl no orv ro sa "
                          "sah sk sl sme sq sr sv ta tr ug uk ur wo")


def rules_for(lang: str, clitics: str = "split") -> LangRules:
    """The rules of a language code (already normalised: ``en``, ``fro``)."""
    if lang == "en" and clitics == "keep":
        return EN_SURFACE
    return RULES.get(lang, GENERIC)
