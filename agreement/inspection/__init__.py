"""``agree inspect``: inside the model (unit ablation, trajectories, probes, patching; docs/inspect.md)."""
