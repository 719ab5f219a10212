"""Hugging Face models on the transformers engine (causal and masked scorers, their
batched forward passes, the loader of a save_pretrained directory) and on vLLM.
transformers and vllm are imported only when a model is loaded."""
