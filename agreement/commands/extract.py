"""``agree extract``: UD treebank -> constructions and original agreement items."""
from __future__ import annotations

import logging

import click

from agreement.errors import AgreeError
from agreement.extraction.config import MODES as MINING_MODES, parse_relations
from agreement.extraction.constructions import summary_table
from agreement.extraction.extract import ExtractConfig, parse_features, parse_values
from agreement.extraction.extract_dir import FORMATS, extract_to_dir
from agreement.extraction.relation_arcs import RELATIONS
from agreement.extraction.relations import reason_text, relation_table
from agreement.options import COUNT, CPUS, LANG, POSITIVE_INT, out_option, pass_run, quiet_option
from treebanks.cache import default_cache_dir
from formats.vocab import vocab_words
from treebanks.paradigms import MODES

log = logging.getLogger(__name__)


@click.command()
@click.argument("treebanks", nargs=-1, required=True, type=click.Path())
@out_option
@click.option("--mode", type=click.Choice(MINING_MODES), default="constructions", show_default=True,
              help="constructions: the paper's construction filter (long-distance arcs of constructions whose "
                   "counts show agreement; needs large treebanks). relations: every arc of an agreement "
                   "relation the annotation marks (--relations), each item one arc and one feature.")
@click.option("--relations", "relations", default=",".join(RELATIONS), show_default=True,
              help="Relations mined in relations mode, a comma list.")
@click.option("--features", default=None,
              help="Agreement feature(s), a |-list such as Number|Gender [default: Number; relations mode: "
                   "Gender|Number|Person, each item contrasting one].")
@click.option("--paradigms", multiple=True, type=click.Path(),
              help="Relations mode: another treebank (file or folder) of the language, read for its "
                   "paradigms only: wrong forms are looked up in the item's own file, then in every treebank "
                   "of the run pooled. Repeatable.")
@click.option("--lexicon", type=click.Path(),
              help="Relations mode: a UniMorph file (lemma, form, features; tab-separated), the last place "
                   "wrong forms are looked up; lines with tags UD has no feature for are skipped and counted.")
@click.option("--values", default="Sing,Plur", show_default=True,
              help="The two Number values contrasted. Arcs with another value at either end "
                   "(Number=Dual in Arabic, Hebrew, Slovenian) are excluded and counted "
                   "(manifest filters: excluded_value), and wrong forms are never dual. A value "
                   "the treebank does not use is an error listing the ones it has.")
@click.option("--lang", type=LANG, help="Language code (e.g. en, it), recorded for agree nonce's article rule.")
@click.option("--min-count", type=COUNT, default=10, show_default=True,
              help="Cues needed for each of two values (singular and plural) to keep a construction.")
@click.option("--min-distance", type=POSITIVE_INT, default=None,
              help="Smallest cue-target index difference (4 = at least 3 words between) "
                   "[default: 4; relations mode: 1].")
@click.option("--max-distance", type=POSITIVE_INT, default=None,
              help="Largest cue-target index difference [default: 14; relations mode: none].")
@click.option("--alt", type=click.Choice(MODES), default="closest", show_default=True,
              help="Alternative form: other number with the closest remaining features, "
                   "or exactly the same ones (the paper).")
@click.option("--infer-verb-number", is_flag=True,
              help="Give finite present VERB/AUX without Number one (Person=3 -> Sing, else Plur), "
                   "as the paper did for English UD 2.0.")
@click.option("--vocab", type=click.Path(exists=True),
              help="LM vocabulary (vocab.txt or a corpus/model directory): keep items whose words "
                   "from cue to target and both target forms are in it.")
@click.option("--explain", multiple=True, metavar="CONSTRUCTION",
              help='Print a construction\'s joint counts and verdict, e.g. "R VERB NOUN CCONJ VERB".')
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="tsv",
              show_default=True, help="colorlessgreen: also write the paper's generated.text/.gold/.eval/.tab.")
@click.option("--no-cache", is_flag=True,
              help="Parse the treebank files even when the cache ($XDG_CACHE_HOME/agree/treebanks, else "
                   "~/.cache/agree/treebanks; keyed by each file's SHA-256) has them.")
@click.option("--workers", type=CPUS, default=None,
              help="Processes parsing treebank files; a big .conllu file is parsed in pieces side by side "
                   "[default: as many as CPUs; 1: no worker processes].")
@quiet_option
@pass_run("extract")
def extract(run, treebanks, mode, relations, features, paradigms, lexicon, values, lang, min_count, min_distance,
            max_distance, alt, infer_verb_number, vocab, explain, fmt, no_cache, workers):
    """Mine agreement items from UD treebanks.

    Mine long-distance agreement constructions from UD treebank files (.conllu,
    .conllu.gz, .conllu.bz2, or directories of them) and write the original test
    items: constructions.tsv, items.tsv, paradigms.tsv, manifest.json. Prints the
    kept constructions (and any --explain diagnostics) on stdout.

    A wrong form differs from the correct one in number only (plus features that
    come and go with number in the treebank, e.g. Gender on Russian past tenses);
    targets whose other-number form also differs in Tense, Mood, VerbForm... are
    rejected and counted (filters: non_number_difference; --explain shows which
    features differed). Dual: see --values.

    --mode relations mines by agreement relation instead (subject-verb,
    subject-predicate, determiner-noun, adjective-noun; Number, Person, Gender, and
    layered Number[subj]...), at every distance: items.tsv gets the columns
    relation, feature, wrong_value, target_side, distance, scoring (sentence where
    the target precedes its cue) and wrong_source; relations.tsv counts arcs, what
    dropped them and the items by relation and feature (the table on stdout).
    Either mode, a run that finds no item says why on stderr.

    \b
    Example:
      agree extract ../shared/data/ud/en_ewt --lang en --out en-items \\
          --explain "R VERB NOUN CCONJ VERB"
      agree extract ../shared/data/ud/cs_cac --lang cs --mode relations --out cs-rel
    """
    ctx = click.get_current_context()
    if mode == "relations":
        given = [f"--{n.replace('_', '-')}" for n in ("values", "min_count", "infer_verb_number", "explain")
                 if ctx.get_parameter_source(n) == click.core.ParameterSource.COMMANDLINE]
        if given:
            raise AgreeError(f"{', '.join(given)}: for the construction filter, not --mode relations")
    elif paradigms or lexicon or ctx.get_parameter_source("relations") == click.core.ParameterSource.COMMANDLINE:
        raise AgreeError("--relations, --paradigms and --lexicon are for --mode relations")
    config = ExtractConfig(features=None if features is None else parse_features(features), min_count=min_count,
                           min_distance=min_distance, max_distance=max_distance, alt=alt, values=parse_values(values),
                           infer_verb_number=infer_verb_number, vocab=vocab_words(vocab) if vocab else None,
                           lang=lang, explain=tuple(explain), mode=mode, relations=parse_relations(relations),
                           cache_dir=None if no_cache else str(default_cache_dir()), workers=workers)
    result = extract_to_dir(run, treebanks, config, vocab=vocab, fmt=fmt, paradigms=paradigms, lexicon=lexicon)
    flags = {p.name: p.opts[0] for p in ctx.command.params if isinstance(p, click.Option)}
    if not result.items:
        log.warning(f"Warning: no agreement items: {reason_text(result.reason, lambda n: flags.get(n, n))}")
    for note in result.notes:
        log.info(f"Note: {note}")
    click.echo(relation_table(result) if mode == "relations" else summary_table(result))
    for text in getattr(result.report, "explanations", ()):  # constructions mode's --explain
        click.echo(text)
    log.info(f"{result.reading.get('cached', 0)} of {len(result.files)} treebank files from the cache")
    what = "" if mode == "relations" else f"{len(result.report.kept)} constructions, "
    log.info(f"{result.sentences} sentences, {what}{len(result.items)} items -> {run.out}")
