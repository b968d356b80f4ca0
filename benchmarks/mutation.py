"""Mutation testing of the core modules, each against the tests that target it.

For every module below, mutmut 3 changes the code one small edit at a time (a flipped
comparison, a changed constant, a dropped argument, ...) and runs the module's tests
against each change; a change the tests do not notice "survives". The run happens in a
throw-away copy of the repository, so the working tree is never touched. Prints, per
module, the mutants killed out of the total and the names of the survivors (inspect one
with ``mutmut show NAME`` inside the copy kept by ``--keep``).

    python benchmarks/mutation.py                  # every module
    python benchmarks/mutation.py substitution io  # some of them
    python benchmarks/mutation.py --at v1 io       # the score of an older revision
    python benchmarks/mutation.py --list-columns   # the table's columns

Slow by design (minutes per module): run it under ``nice`` with one worker.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ["module", "killed", "total", "score", "survived"]
PARTS = ("server", "players", "tests")
FILES = ("pyproject.toml", "README.md")


@dataclass(frozen=True)
class Target:
    """One module under mutation and the tests that are expected to catch its bugs."""

    source: str
    tests: list[str]
    only: list[str] = field(default_factory=list)
    """Function names to mutate (all when empty), for modules too slow to mutate whole."""


TARGETS: dict[str, Target] = {
    "substitution": Target(
        "server/match/substitution.py",
        [
            "tests/match/test_substitution.py",
            "tests/match/test_misbehaving_players.py",
            "tests/match/test_match_rules.py",
        ],
    ),
    "replies": Target(
        "server/protocol/replies.py",
        ["tests/protocol/test_protocol_replies.py", "tests/protocol/test_move_matching.py"],
    ),
    "signing": Target(
        "server/records/signing.py",
        [
            "tests/signing/test_signing_records.py",
            "tests/signing/test_signing_host_key.py",
            "tests/signing/test_signing_untrusted.py",
            "tests/signing/test_signing_keys.py",
            "tests/signing/test_signing_cli.py",
            "tests/signing/test_canonical_json.py",
        ],
    ),
    "io": Target(
        "server/records/io.py",
        ["tests/records"],
    ),
    "replayer": Target(
        "server/replay/replayer.py",
        [
            "tests/replay/test_replay_tampering.py",
            "tests/replay/test_replay_our_logs.py",
            "tests/replay/test_replay_other_servers.py",
            "tests/replay/test_replay_verdicts.py",
        ],
    ),
    "validator": Target(
        "server/gdl/validator.py",
        ["tests/gdl/test_validator.py"],
    ),
    "codegen": Target(
        "server/gdl/compiled/codegen.py",
        ["tests/gdl/test_compiled_engine.py", "tests/gdl/test_compiled_next_state.py"],
        only=["_next_lines", "_move_key", "_dispatch", "items_code", "conj_code"],
    ),
}


def _config(target: Target, workdir: Path) -> str:
    """The ``[tool.mutmut]`` section for one target (its tests that exist in the copy)."""
    tests = [test for test in target.tests if (workdir / test).exists()]
    return "\n".join(
        [
            "",
            "[tool.mutmut]",
            'source_paths = ["server", "players"]',
            f"only_mutate = {json.dumps([target.source])}",
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
            'pytest_add_cli_args = ["-n", "0", "-p", "no:cacheprovider", "-q"]',
            "",
        ]
    )


def _copy_repository(into: Path, revision: str | None) -> None:
    """The code, tests and configuration: of the working tree, or of a git revision."""
    if revision is not None:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", revision, *PARTS, *FILES],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
        return
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", "mutants", ".git")
    for name in PARTS:
        shutil.copytree(ROOT / name, into / name, ignore=ignore)
    for name in FILES:
        shutil.copy2(ROOT / name, into / name)


@dataclass
class Score:
    """The outcome of one module's mutation run."""

    module: str
    killed: int
    total: int
    survived: list[str]

    @property
    def score(self) -> str:
        return f"{100 * self.killed / self.total:.0f}%" if self.total else "-"


def _mutmut(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    mutmut = Path(sys.executable).with_name("mutmut")
    env = {**os.environ, "GGP_REQUIRE_SHARED": "0"}
    return subprocess.run(
        [str(mutmut), *args], cwd=workdir, env=env, capture_output=True, text=True
    )


def run(module: str, target: Target, keep: bool, revision: str | None = None) -> Score:
    """Mutate one module in a fresh copy of the repository and collect the verdicts."""
    workdir = Path(tempfile.mkdtemp(prefix=f"mutation-{module}-"))
    try:
        _copy_repository(workdir, revision)
        with (workdir / "pyproject.toml").open("a", encoding="utf-8") as config:
            config.write(_config(target, workdir))
        dotted = target.source.removesuffix(".py").replace("/", ".")
        patterns = [f"{dotted}.*{name}__mutmut_*" for name in target.only] or [f"{dotted}.*"]
        ran = _mutmut(workdir, "run", "--max-children", "1", *patterns)
        if ran.returncode not in (0, 1):
            sys.stderr.write(ran.stdout[-3000:] + ran.stderr[-3000:])
        listed = _mutmut(workdir, "results", "--all", "true").stdout
        verdicts = dict(re.findall(r"^\s*(\S+__mutmut_\d+): (.+)$", listed, re.MULTILINE))
        if target.only:
            verdicts = {
                name: verdict
                for name, verdict in verdicts.items()
                if any(f"{part}__mutmut_" in name for part in target.only)
            }
        survived = sorted(name for name, verdict in verdicts.items() if verdict != "killed")
        return Score(module, len(verdicts) - len(survived), len(verdicts), survived)
    finally:
        if keep:
            print(f"# {module}: kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"default: all of {', '.join(TARGETS)}")
    parser.add_argument("--list-columns", action="store_true", help="print the columns and exit")
    parser.add_argument("--keep", action="store_true", help="keep the copies to inspect survivors")
    parser.add_argument("--json", type=Path, help="also write the scores to this file")
    parser.add_argument(
        "--at", metavar="REVISION", help="test the code and tests of a git revision instead"
    )
    args = parser.parse_args(argv)
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    unknown = sorted(set(args.modules) - set(TARGETS))
    if unknown:
        parser.error(f"unknown modules: {', '.join(unknown)}")
    scores = []
    print("\t".join(COLUMNS), flush=True)
    for module in args.modules or list(TARGETS):
        score = run(module, TARGETS[module], args.keep, args.at)
        scores.append(score)
        row = [module, str(score.killed), str(score.total), score.score, " ".join(score.survived)]
        print("\t".join(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps([vars(score) for score in scores], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
