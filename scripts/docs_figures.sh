#!/usr/bin/env bash
# The figures of the documentation site (docs/img/) that the current code draws in minutes:
# the demo's two accuracy plots (`agree demo`, about 3 minutes on 2 CPU cores) and, from the
# paper's released Italian outputs and raters, agree score's model-vs-human plot and agree
# analyze's noise ceiling and forest plot (about 30 s). The learning curves take an hour:
# scripts/learning_curve.sh. Needs ../shared/data for the paper's figures and `make setup`.
#   bash scripts/docs_figures.sh [RUNS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
A=${AGREE:-.venv/bin/agree}
D=../shared/data
R=${1:-runs/docs-figures}
mkdir -p "$R"
$A demo --out $R/demo -q > /dev/null
cp $R/demo/score/accuracy_by_attractors.png docs/img/demo_accuracy_by_attractors.png
cp $R/demo/score/accuracy_by_construction.png docs/img/demo_accuracy_by_construction.png
if [ -d "$D/colorlessgreen" ]; then
  T=$D/colorlessgreen/Italian/best_model_mturk.tab
  $A score $T --from-outputs hidden650_batch64_dropout0.2_lr10.0 --humans $T --out $R/it-paper -q > /dev/null
  $A analyze $R/it-paper --out $R/it-analysis -q > /dev/null
  cp $R/it-paper/model_vs_human.png docs/img/it_paper_model_vs_human.png
  cp $R/it-analysis/ceiling.png docs/img/it_paper_ceiling.png
  cp $R/it-analysis/forest.png docs/img/it_paper_forest.png
else
  echo "docs_figures: $D/colorlessgreen is absent, the paper's figures are kept as they are" >&2
fi
echo "done: docs/img/ (runs in $R)" >&2
