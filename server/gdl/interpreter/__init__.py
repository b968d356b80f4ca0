"""The reference interpreter: bottom-up evaluation of GDL rules."""

from . import native

native.load()  # before the modules it may load from their sources

from .engine import Interpreter  # noqa: E402

__all__ = ["Interpreter"]
