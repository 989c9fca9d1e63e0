"""torchdoctor: a training-loop linter and runtime debugger for PyTorch.

Importing the package stays light: torch is imported only when the runtime
companion (`torchdoctor.watch`) is used, never on the lint path.
"""

__version__ = "0.1.0"
__all__ = ["__version__", "watch"]


def __getattr__(name: str):
    if name == "watch":
        from torchdoctor.runtime.watcher import watch

        return watch
    raise AttributeError(f"module 'torchdoctor' has no attribute {name!r}")
