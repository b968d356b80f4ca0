"""The reference interpreter: bottom-up evaluation of GDL rules."""

from .engine import Interpreter

__all__ = ["Interpreter"]
