"""The reference interpreter: bottom-up evaluation of GDL rules."""

from .. import native

native.load("interpreter")  # before the modules it may import from their sources

from .engine import Interpreter  # noqa: E402

__all__ = ["Interpreter"]
