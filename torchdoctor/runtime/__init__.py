"""The runtime companion: hooks that watch a real training run. Imports torch.

`torchdoctor.watch(model)` (see watcher.py) and `torchdoctor run script.py` (see run.py).
"""
