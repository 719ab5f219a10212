#!/usr/bin/env bash
# The README's learning curves: a small LSTM trained with snapshots on the shared English
# dump (and, with LANGS="en it", on the Italian text), scored as curves on the paper's test
# sets and on ours; the paper-set figures are copied to docs/img/. Needs ../shared/data and
# `make setup`. English took 53 minutes on 2 CPU cores that other jobs kept at load 10-13
# (training 51 of them), Italian 55 (training 48, at load 8-20); see the README.
#   bash scripts/learning_curve.sh [RUNS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
A=.venv/bin/agree
D=../shared/data
R=${1:-runs/curve}
LANGS=${LANGS:-en}
# one thread: on cores other jobs share, more threads are slower (lm/neural/train.py)
THREADS=${THREADS:-1}
[ -d "$D" ] || { echo "Error: $D is absent" >&2; exit 1; }
mkdir -p "$R"
for L in $LANGS; do
  if [ $L = en ]; then
    P=English; SRC=$D/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
    TB="$D/ud/en_ewt"; MIN=10; EVERY=200; EPOCHS=3
  else
    P=Italian; SRC=$D/corpora/it/kind-it.txt
    TB="$D/ud/it_isdt $D/ud/it_partut"; MIN=5; EVERY=300; EPOCHS=1
  fi
  [ -d $R/$L-corpus ] || $A corpus $SRC --lang $L --out $R/$L-corpus -q
  [ -d $R/$L-lstm ] || $A train-lm $R/$L-corpus --arch lstm --size small --snapshot-every $EVERY \
    --epochs $EPOCHS --threads $THREADS --out $R/$L-lstm -q
  [ -d $R/$L-items ] || $A extract $TB --lang $L --min-count $MIN --out $R/$L-items -q
  [ -d $R/$L-nonce ] || $A nonce $R/$L-items --n 9 --seed 1 --out $R/$L-nonce -q
  $A score $D/colorlessgreen/$P/generated.text --model $R/$L-lstm --curve --out $R/$L-curve-paper -q > /dev/null
  $A score $R/$L-nonce --model $R/$L-lstm --curve --out $R/$L-curve-ours -q > /dev/null
done
for L in $LANGS; do cp $R/$L-curve-paper/learning_curve.png docs/img/learning_curve_$L.png; done
echo "done: $R (curves in $R/*-curve-*/learning_curve.png, what they say in summary.md)" >&2
