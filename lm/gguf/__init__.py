"""GGUF files: header checks, which engine runs a file, and the llama.cpp engine
(llama_cpp is imported only when a model is loaded); the transformers engine is lm.hf's."""
