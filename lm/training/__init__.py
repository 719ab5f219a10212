"""Training any architecture: the trainer registry (architecture -> settings, presets,
training function; the backends' records, which load models, are lm.backends'), the driver (corpus in, model
directory out, checkpoints), snapshots, and the library verb with its manifest."""
