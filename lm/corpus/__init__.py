"""Language-model corpora: MediaWiki dumps and text files in, tokenised train/valid/test
splits and a vocabulary (words, or sentencepiece pieces) out."""
