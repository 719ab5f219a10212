"""lm.corpus.tokenize: UD-style tokens and sentences for English, Italian and other languages."""
from __future__ import annotations

import pytest

from conftest import shared_path
from lm.corpus.tokenize import get_tokenizer, sentences, tokenize
from lm.corpus.treebank_tokens import agreement, gold_sentences


def toks(text, lang="en", **kw):
    return " ".join(tokenize(text, lang, **kw))


class TestEnglish:
    @pytest.mark.parametrize("text, expected", [
        ("I don't know.", "I do n't know ."),
        ("We can't, won't and cannot go.", "We ca n't , wo n't and can not go ."),
        ("John's car; I'm here, they're there, we've been, I'll go, he'd say",
         "John 's car ; I 'm here , they 're there , we 've been , I 'll go , he 'd say"),
        ("It’s Bush’s plan", "It ’s Bush ’s plan"),  # typographic apostrophe
        ("the teachers' room", "the teachers ' room"),
        ("I'm gonna go", "I 'm gon na go"),
    ])
    def test_clitics_split_as_ud_words(self, text, expected):
        """Clitics become separate tokens, as in the paper's corpora and UD before v2.8."""
        assert toks(text) == expected

    def test_clitics_keep_gives_ud_216_surface_tokens(self):
        assert toks("I don't think John's teachers' plan cannot work.", clitics="keep") == \
            "I don't think John's teachers' plan cannot work ."

    @pytest.mark.parametrize("text, expected", [
        ("Mr. Smith met Dr. Jones in the U.S. on Jan. 5, e.g. at 10:30 a.m.",
         "Mr. Smith met Dr. Jones in the U.S. on Jan. 5 , e.g. at 10:30 a.m."),
        ("It cost $3.5 million (about 1,000,000 euros)!",
         "It cost $ 3.5 million ( about 1,000,000 euros ) !"),
        ('He said "no"... Really?!', 'He said " no " ... Really ?!'),
        ("J. R. R. Tolkien wrote it.", "J. R. R. Tolkien wrote it ."),
        ("on 9/11 and 11/28/2000 call 713-853-3989", "on 9/11 and 11/28/2000 call 713-853-3989"),
    ])
    def test_punctuation_numbers_abbreviations(self, text, expected):
        assert toks(text) == expected

    def test_urls_emails_and_hyphens(self):
        assert toks("See www.example.com/a?b=1, mail jo.ann@enron.com now.") == \
            "See www.example.com/a?b=1 , mail jo.ann@enron.com now ."
        # EWT splits compounds at the hyphen but keeps prefixes such as non-, re-
        assert toks("a well-known non-profit will re-open the e-mail") == \
            "a well - known non-profit will re-open the e-mail"
        assert toks("and/or ===== ...") == "and / or ===== ..."


class TestItalian:
    @pytest.mark.parametrize("text, expected", [
        ("L'ordine dell'anno è un po' strano.", "L' ordine dell' anno è un po' strano ."),
        ("C'è un'altra cosa nell'aula, quest'anno.", "C' è un' altra cosa nell' aula , quest' anno ."),
        ("Della casa, dargli il libro", "Della casa , dargli il libro"),  # MWT surface forms stay
        ("E' vero: «sì», disse il sig. Rossi ecc.", "E' vero : « sì » , disse il sig. Rossi ecc."),
        ("la direttiva 94/55/CE del 1.000 e 3,5", "la direttiva 94 / 55 / CE del 1.000 e 3,5"),
        ("l' ordine", "l' ordine"),  # already tokenised text is stable
    ])
    def test_elision_and_conventions(self, text, expected):
        assert toks(text, "it") == expected

    def test_clitic_option_does_not_touch_italian(self):
        assert tokenize("dell'anno", "it", clitics="keep") == tokenize("dell'anno", "it") == ["dell'", "anno"]


class TestOtherLanguages:
    def test_generic_fallback_splits_punctuation_keeps_word_apostrophes(self):
        assert toks("Der Hund, sagt O'Brien, läuft.", "de") == "Der Hund , sagt O'Brien , läuft ."

    def test_french_elides_like_italian(self):
        assert toks("l'homme qu'il voit", "fr") == "l' homme qu' il voit"

    def test_language_code_variants_and_bad_option(self):
        assert get_tokenizer("EN_us") == get_tokenizer("en")
        with pytest.raises(ValueError):
            get_tokenizer("en", "merge")


class TestSentences:
    def test_abbreviations_titles_initials_do_not_split(self):
        text = ("Mr. Smith lives in St. Louis. J. R. R. Tolkien wrote it! Did he? "
                'He said "Go home." Then he left etc. The end.')
        assert [" ".join(s) for s in sentences(text, "en")] == [
            "Mr. Smith lives in St. Louis .",
            "J. R. R. Tolkien wrote it !",
            "Did he ?",
            'He said " Go home . "',
            "Then he left etc.",
            "The end .",
        ]

    def test_no_split_before_lowercase_or_inside_numbers(self):
        assert sentences("It costs 3.5 euros. and more", "en") == [["It", "costs", "3.5", "euros", ".", "and", "more"]]

    def test_italian(self):
        assert [" ".join(s) for s in sentences("Il sig. Rossi è qui. L'ordine è giunto.", "it")] == \
            ["Il sig. Rossi è qui .", "L' ordine è giunto ."]


@pytest.mark.integration
@pytest.mark.parametrize("lang, treebank, floor", [("en", "en_ewt", 0.985), ("it", "it_isdt", 0.99)])
def test_reproduces_ud_dev_tokens(lang, treebank, floor):
    """On a UD dev file, the tokenizer reproduces nearly every treebank token."""
    dev = sorted(shared_path("ud", treebank).glob("*-dev.conllu"))
    gold = gold_sentences(dev, words=(lang == "en"))
    assert agreement(gold, lambda text: tokenize(text, lang)).recall >= floor
