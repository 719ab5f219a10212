"""``agree doctor``: which parts of agree work in this environment."""
from __future__ import annotations

import json

import click

from agreement.doctor import format_checks, run_checks


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {name, ok, detail, needed_for}.")
def doctor(as_json):
    """Check what works in this installation.

    Check this installation: Python, the agree version, torch and its device
    (CUDA or CPU), KenLM's lmplz/build_binary, the kenlm module and the optional
    stacks (hf: transformers...; gguf: llama_cpp...; analysis: scipy, statsmodels).
    Then one line per extra of the agree-bench distribution (extra:hf ...): the
    commands it serves, what is missing and the one pip command that installs it;
    and import-names: whether another installed distribution (such as the
    inter-rater `agreement` library) has files in agreement/, formats/, lm/,
    treebanks/ or nonce/. One line each on stdout; a missing part says how to get
    it. Exit code 0 even when something is missing: this command reports, it does
    not judge.

    \b
    Example:
      agree doctor
      agree doctor --json | python -c 'import json,sys; print(json.load(sys.stdin)[2])'
    """
    checks = run_checks()
    if as_json:
        click.echo(json.dumps([c.to_dict() for c in checks], indent=2))
    else:
        click.echo(format_checks(checks), nl=False)
