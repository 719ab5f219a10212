#!/usr/bin/env bash
# The commands behind the README's real-data figures (16 minutes on 2 CPU cores, measured):
# corpora, the three small models per language, test sets from the shared UD treebanks,
# scores on the paper's and our test sets, robustness curves.
#   bash scripts/real_data_study.sh [RUNS_DIR]     (needs ../shared/data and `make setup`)
set -euo pipefail
cd "$(dirname "$0")/.."
A=.venv/bin/agree
D=../shared/data
R=${1:-runs}
[ -d "$D" ] || { echo "Error: $D is absent" >&2; exit 1; }
mkdir -p "$R"
$A corpus $D/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 --lang en --out $R/en-corpus -q
$A corpus $D/corpora/it/kind-it.txt --lang it --out $R/it-corpus -q
for L in en it; do
  $A train-lm $R/$L-corpus --arch kn5 --vocab-size 10000 --out $R/$L-kn5 -q
  $A train-lm $R/$L-corpus --arch unigram --vocab-size 10000 --out $R/$L-unigram -q
done
$A train-lm $R/en-corpus --arch lstm --size small --out $R/en-lstm -q
$A train-lm $R/it-corpus --arch lstm --size small --epochs 2 --out $R/it-lstm -q
$A extract $D/ud/en_ewt --lang en --out $R/en-items -q
$A nonce $R/en-items --n 9 --seed 1 --out $R/en-nonce -q
$A extract $D/ud/it_isdt $D/ud/it_partut --lang it --min-count 5 --out $R/it-items -q
$A nonce $R/it-items --n 9 --seed 1 --out $R/it-nonce -q
for L in en it; do
  P=English; [ $L = it ] && P=Italian
  M="--model $R/$L-lstm --model $R/$L-kn5 --model $R/$L-unigram"
  $A score $D/colorlessgreen/$P/generated.text $M --out $R/score-$L-paper -q
  $A score $D/colorlessgreen/$P/generated.text $M --require-in-vocab --out $R/score-$L-paper-iv -q
  $A score $R/$L-nonce $M --out $R/score-$L-ours -q
done
# robustness on the shared English set: qwerty by POS group (and its matched random control), semantic
P=$R/perturbed; mkdir -p $P
for s in 0.25 0.5 1.0; do
  for g in function mid nouns verbs content; do
    $A perturb $R/en-nonce --aspect qwerty --severity $s --pos-group $g --seed 1 --out $P/q-$g-$s -q
  done
  $A perturb $R/en-nonce --aspect qwerty --severity $s --pos-group random --match-group nouns --seed 1 --out $P/q-random-$s -q
done
for s in 0.6 0.4 0.2; do $A perturb $R/en-nonce --aspect semantic --severity $s --vectors $R/en-lstm --seed 1 --out $P/sem-$s -q; done
$A score $R/en-nonce $P/q-* $P/sem-* --model $R/en-lstm --model $R/en-kn5 --out $R/robustness -q
# robustness on the demo's generated language (its LSTM tracks agreement, so the curves move)
$A demo --out $R/demo -q > /dev/null
Q=$R/demo-perturbed; mkdir -p $Q
for s in 0.25 0.5 1.0; do
  for g in function nouns verbs; do
    $A perturb $R/demo/nonce --aspect qwerty --severity $s --pos-group $g --seed 1 --out $Q/q-$g-$s -q
  done
  $A perturb $R/demo/nonce --aspect qwerty --severity $s --pos-group random --match-group nouns --seed 1 --out $Q/q-random-$s -q
done
for s in 0.6 0.4 0.2; do $A perturb $R/demo/nonce --aspect semantic --severity $s --vectors $R/demo/models/lstm --seed 1 --out $Q/sem-$s -q; done
$A score $R/demo/nonce $Q/q-* $Q/sem-* --model $R/demo/models/lstm --model $R/demo/models/kn5 --out $R/demo-robustness -q
echo "done: $R (tables in $R/score-*/summary.md, curves in $R/robustness/robustness.png)" >&2
