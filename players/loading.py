"""Loading a player or bot class named ``module:Class`` (or ``path/to/file.py:Class``)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

from .base import Player
from .bot import Bot, BotPlayer


class LoadError(KeyError):
    """A ``module:Class`` that cannot be loaded; ``args[0]`` is a one-line reason."""


def load_class(spec: str) -> type:
    """The class ``spec`` names; the current directory is searched for the module first."""
    location, _, class_name = spec.rpartition(":")
    if not location or not class_name:
        raise LoadError(f"{spec!r} is not MODULE:CLASS (e.g. mybot:MyBot)")
    try:
        if location.endswith(".py"):
            module = _module_from_file(Path(location))
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(location)
    except LoadError:
        raise
    except Exception as error:  # any failure inside the author's module
        raise LoadError(f"cannot import {location!r}: {type(error).__name__}: {error}") from None
    found = getattr(module, class_name, None)
    if not isinstance(found, type):
        raise LoadError(f"{location!r} has no class {class_name!r}")
    return found


def load_player(spec: str, *, display_name: str | None = None, seed: int | None = None) -> Player:
    """A player from a :class:`Bot` or :class:`Player` subclass named ``module:Class``."""
    found = load_class(spec)
    if issubclass(found, Bot):
        return BotPlayer(found, name=display_name, seed=seed)
    if issubclass(found, Player):
        return found(name=display_name, seed=seed)
    raise LoadError(f"{spec!r} is neither a Bot nor a Player subclass")


def _module_from_file(path: Path) -> object:
    if not path.is_file():
        raise LoadError(f"no such file: {path}")
    name = path.stem
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise LoadError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module
