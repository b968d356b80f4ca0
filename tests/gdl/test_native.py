"""The engine's hot modules, compiled by mypyc when installed: loaded only when they
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

import server.gdl.compiled
import server.gdl.interpreter
from server.gdl import native

assert server.gdl.compiled and server.gdl.interpreter  # each decided its form on import

ROOT = Path(__file__).parent.parent.parent
GAMES = ROOT / "server" / "games"

PLAYOUT = """
import hashlib, random, sys
from server.gdl import Game, native
game = Game.from_file(sys.argv[1], engine=sys.argv[3])
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
package = "compiled" if sys.argv[3] == "compiled" else "interpreter"
print(native.FORMS[package], digest.hexdigest())
"""

COMPILED_SOURCE = """
import hashlib, sys
from server.gdl import Game, native
from server.gdl.compiled import CompiledEngine
engine = CompiledEngine.from_rules(Game.from_file(sys.argv[1]).rules)
print(native.FORMS["compiled"], engine.source.count("\\n"), engine.form)
print(hashlib.sha256(engine.source.encode()).hexdigest())
"""


def run_python(script: str, *args: str, pure: bool, cwd: Path = ROOT) -> list[str]:
    """The words ``script`` prints in a fresh process, on the engine's sources when
    ``pure`` (else in whichever form the install left), its string hashes seeded alike
    (the generated code follows the order of sets of names)."""
    env = {key: value for key, value in os.environ.items() if key != native.PURE_VARIABLE}
    env["PYTHONHASHSEED"] = "0"
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


def playout_digest(game: Path, playouts: int, engine: str, pure: bool) -> list[str]:
    """The form a fresh process loaded and the digest of its random playouts."""
    return run_python(PLAYOUT, str(game), str(playouts), engine, pure=pure)


@pytest.mark.parametrize("package", sorted(native.GROUPS))
def test_an_install_with_a_compiler_runs_the_compiled_modules(package: str) -> None:
    """CI installs with a C compiler: neither package may fall back unnoticed."""
    if native.FORMS[package] != "compiled" and not os.environ.get("CI"):
        pytest.skip(f"{package} runs its sources here: {native.REASONS[package]}")
    assert native.FORMS[package] == "compiled", native.REASONS[package]
    for name in native.GROUPS[package]:
        module = sys.modules[f"server.gdl.{package}.{name}"]
        assert isinstance(module.__loader__, importlib.machinery.ExtensionFileLoader)


@pytest.mark.parametrize("engine", ["interpreter", "compiled"])
def test_both_forms_play_the_same_playouts(engine: str) -> None:
    """Random playouts of the bundled games on each engine: the same moves, states and
    goals from the sources and compiled (the corpus's differential tests run the
    compiled form)."""
    chosen = sorted(GAMES.glob("*.kif"))
    assert len(chosen) >= 4
    for game in chosen:
        pure = playout_digest(game, 3, engine, pure=True)
        assert pure[0] == "source"
        other = playout_digest(game, 3, engine, pure=False)
        assert other[1] == pure[1], game.name


def test_both_forms_compile_a_game_to_the_same_code() -> None:
    """The compile pipeline's modules, compiled or not, write the same program."""
    for game in sorted(GAMES.glob("*.kif")):
        pure = run_python(COMPILED_SOURCE, str(game), pure=True)
        assert pure[0] == "source"
        assert run_python(COMPILED_SOURCE, str(game), pure=False)[1:] == pure[1:], game.name


def fake_install(folder: Path, modules: tuple[str, ...]) -> None:
    """Sources and compiled files (empty), as an install leaves them, with no stamp."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in modules:
        (folder / f"{name}.py").write_text(f"# {name}\n")
        (folder / f"{name}{suffix}").write_bytes(b"")


def digests(folder: Path, modules: tuple[str, ...]) -> dict[str, str]:
    """The stamp of ``folder``'s sources, worked out here rather than by :mod:`native`."""
    return {
        name: hashlib.sha256((folder / f"{name}.py").read_bytes()).hexdigest() for name in modules
    }


@pytest.mark.parametrize("package", sorted(native.GROUPS))
def test_compiled_modules_are_trusted_only_while_their_sources_are_unchanged(
    package: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = native.GROUPS[package]
    edited = modules[-1]
    monkeypatch.delenv(native.PURE_VARIABLE, raising=False)
    assert native.why_not_compiled(tmp_path, modules) == (
        "not compiled when installed (no C compiler or no mypyc)"
    )
    fake_install(tmp_path, modules)
    assert native.source_digests(tmp_path, modules) == digests(tmp_path, modules)
    no_stamp = f"no valid {native.STAMP} beside the compiled modules"
    assert native.why_not_compiled(tmp_path, modules) == no_stamp
    (tmp_path / native.STAMP).write_text("{not json")
    assert native.why_not_compiled(tmp_path, modules) == no_stamp
    (tmp_path / native.STAMP).write_text(json.dumps(digests(tmp_path, modules)))
    assert native.why_not_compiled(tmp_path, modules) is None
    (tmp_path / f"{edited}.py").write_text(f"# {edited}, edited\n")
    assert native.why_not_compiled(tmp_path, modules) == (
        f"{edited}.py changed since it was compiled (reinstall to compile it again)"
    )
    (tmp_path / f"{edited}.py").write_text(f"# {edited}\n")
    assert native.why_not_compiled(tmp_path, modules) is None
    (tmp_path / native.STAMP).write_text("[]")
    assert native.why_not_compiled(tmp_path, modules) == (
        f"{modules[0]}.py changed since it was compiled (reinstall to compile it again)"
    )
    monkeypatch.setenv(native.PURE_VARIABLE, "1")
    assert native.why_not_compiled(tmp_path, modules) == f"{native.PURE_VARIABLE} is set"


@pytest.mark.parametrize(("package", "edited"), [("interpreter", "engine"), ("compiled", "plan")])
def test_an_edited_source_is_run_as_it_reads_now(package: str, edited: str, tmp_path: Path) -> None:
    """A copy of the package whose source no longer matches its stamp: a fresh process
    imports every module of that package from its source, not the compiled file beside
    it, and the other package compiled."""
    if native.FORMS[package] != "compiled":
        pytest.skip(f"nothing compiled to shadow the sources here: {native.REASONS[package]}")
    copy = tmp_path / "tree"
    copy.mkdir()
    subprocess.run(["cp", "-r", str(ROOT / "server"), str(copy)], check=True)
    source = copy / "server" / "gdl" / package / f"{edited}.py"
    source.write_text(source.read_text() + "\nEDITED = True\n")
    other = "compiled" if package == "interpreter" else "interpreter"
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        f"import server.gdl.{package}, server.gdl.{other}\n"
        "from server.gdl import native\n"
        f"from server.gdl.{package} import {', '.join(native.GROUPS[package])}\n"
        f"modules = [{', '.join(native.GROUPS[package])}]\n"
        f"print(native.FORMS[{package!r}], native.FORMS[{other!r}], {edited}.EDITED,\n"
        "      *sorted({type(module.__loader__).__name__ for module in modules}))\n"
    )
    assert run_python(script, str(copy), pure=False, cwd=tmp_path) == [
        "source",
        "compiled",
        "True",
        "SourceFileLoader",
    ]


def test_the_summary_names_each_package_before_it_is_imported() -> None:
    """The benchmarks print the forms in their headers, before any game is loaded."""
    script = (
        "import sys\n"
        "from server.gdl import native\n"
        "print(native.summary())\n"
        "print('server.gdl.compiled.network' in sys.modules)\n"
    )
    words = run_python(script, pure=True)
    assert words[:2] == ["interpreter:", "source"] and words[-1] == "False"
    assert "compiled:" in words and f"({native.PURE_VARIABLE}" in words
