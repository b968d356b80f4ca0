"""The interpreter's hot modules, compiled by mypyc when installed: loaded only when they
match their sources, and giving the same answers as the sources."""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from server.gdl.interpreter import native

ROOT = Path(__file__).parent.parent.parent

PLAYOUT = """
import hashlib, random, sys
from server.gdl import Game
from server.gdl.interpreter import native
game = Game.from_file(sys.argv[1], engine="interpreter")
rng = random.Random(5)
digest = hashlib.sha256()
for _ in range(int(sys.argv[2])):
    state = game.initial_state()
    while not game.is_terminal(state):
        moves = [game.legal_moves(state, role) for role in game.roles]
        digest.update(repr(moves).encode())
        state = game.next_state(state, [rng.choice(choices) for choices in moves])
    digest.update(repr(sorted(map(repr, state.facts))).encode())
    digest.update(repr(game.defined_goals(state)).encode())
print(native.FORM, digest.hexdigest())
"""


def run_python(script: str, *args: str, pure: bool, cwd: Path = ROOT) -> list[str]:
    """The words ``script`` prints in a fresh process, on the interpreter's sources when
    ``pure`` (else in whichever form the install left)."""
    env = {key: value for key, value in os.environ.items() if key != native.PURE_VARIABLE}
    if pure:
        env[native.PURE_VARIABLE] = "1"
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    return result.stdout.split()


def playout_digest(game: Path, playouts: int, pure: bool) -> list[str]:
    """The form a fresh process loaded and the digest of its random playouts."""
    return run_python(PLAYOUT, str(game), str(playouts), pure=pure)


def test_an_install_with_a_compiler_runs_the_compiled_modules() -> None:
    """CI installs with a C compiler: the interpreter must not fall back unnoticed."""
    if native.FORM != "compiled" and not os.environ.get("CI"):
        pytest.skip(f"the interpreter runs its sources here: {native.REASON}")
    assert native.FORM == "compiled", native.REASON
    for name in native.MODULES:
        module = sys.modules[f"server.gdl.interpreter.{name}"]
        assert isinstance(module.__loader__, importlib.machinery.ExtensionFileLoader)


def test_both_forms_play_the_same_playouts() -> None:
    """Random playouts of the bundled games: the same moves, states and goals from the
    sources and compiled (the corpus's differential tests run the compiled form)."""
    chosen = sorted((ROOT / "server" / "games").glob("*.kif"))
    assert len(chosen) >= 4
    for game in chosen:
        pure = playout_digest(game, 3, pure=True)
        assert pure[0] == "source"
        other = playout_digest(game, 3, pure=False)
        assert other[1] == pure[1], game.name


def fake_install(folder: Path) -> None:
    """Sources and compiled files (empty), as an install leaves them, with no stamp."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in native.MODULES:
        (folder / f"{name}.py").write_text(f"# {name}\n")
        (folder / f"{name}{suffix}").write_bytes(b"")


def digests(folder: Path) -> dict[str, str]:
    """The stamp of ``folder``'s sources, worked out here rather than by :mod:`native`."""
    return {
        name: hashlib.sha256((folder / f"{name}.py").read_bytes()).hexdigest()
        for name in native.MODULES
    }


def test_compiled_modules_are_trusted_only_while_their_sources_are_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "HERE", tmp_path)
    monkeypatch.delenv(native.PURE_VARIABLE, raising=False)
    assert native._why_not_compiled() == ("not compiled when installed (no C compiler or no mypyc)")
    fake_install(tmp_path)
    assert native.source_digests(tmp_path) == digests(tmp_path)
    assert native._why_not_compiled() == f"no valid {native.STAMP} beside the compiled modules"
    (tmp_path / native.STAMP).write_text("{not json")
    assert native._why_not_compiled() == f"no valid {native.STAMP} beside the compiled modules"
    (tmp_path / native.STAMP).write_text(json.dumps(digests(tmp_path)))
    assert native._why_not_compiled() is None
    (tmp_path / "engine.py").write_text("# engine, edited\n")
    assert native._why_not_compiled() == (
        "engine.py changed since it was compiled (reinstall to compile it again)"
    )
    (tmp_path / "engine.py").write_text("# engine\n")
    assert native._why_not_compiled() is None
    monkeypatch.setenv(native.PURE_VARIABLE, "1")
    assert native._why_not_compiled() == f"{native.PURE_VARIABLE} is set"


def test_an_edited_source_is_run_as_it_reads_now(tmp_path: Path) -> None:
    """A copy of the package whose engine source no longer matches its stamp: a fresh
    process loads every module from its source, not the compiled file beside it."""
    if native.FORM != "compiled":
        pytest.skip(f"nothing compiled to shadow the sources here: {native.REASON}")
    copy = tmp_path / "tree"
    copy.mkdir()
    subprocess.run(["cp", "-r", str(ROOT / "server"), str(copy)], check=True)
    engine = copy / "server" / "gdl" / "interpreter" / "engine.py"
    engine.write_text(engine.read_text() + "\nEDITED = True\n")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from server.gdl.interpreter import native, engine\n"
        "print(native.FORM, getattr(engine, 'EDITED', False), type(engine.__loader__).__name__)\n"
    )
    assert run_python(script, str(copy), pure=False, cwd=tmp_path) == [
        "source",
        "True",
        "SourceFileLoader",
    ]
