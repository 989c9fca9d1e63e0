"""The runtime companion: hooks that watch a real training run. Imports torch."""
