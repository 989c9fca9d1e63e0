"""Reading user files the way Python does: a UTF-8 BOM or an encoding cookie is honoured, and
the same encoding is used to write a fix back, so `--fix` never adds or drops a BOM."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path


def read_source(path: str | Path) -> tuple[str, str]:
    """(text without BOM, line endings kept as written; the encoding to write it back with).

    Raises OSError, or UnicodeDecodeError / SyntaxError (a bad cookie) for text Python could not read either.
    """
    raw = Path(path).read_bytes()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    return raw.decode(encoding), encoding


def write_source(path: str | Path, text: str, encoding: str) -> None:
    Path(path).write_bytes(text.encode(encoding))
