"""Training any architecture: the trainer registry (architecture -> settings, presets,
training function; the *loader* registry is lm.loaders'), the driver (corpus in, model
directory out, checkpoints), snapshots, and the library verb with its manifest."""
