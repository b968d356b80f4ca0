"""Stopping ``ggp serve --demo``: a Ctrl-C at the terminal stops it in one line, and
neither Ctrl-C nor SIGKILL leaves a rules process or a bundled player behind.

The service runs as a real subprocess in a session of its own, so that a signal sent to
its process group is what a terminal's Ctrl-C sends: every process in the foreground group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_table import alive, command_line, descendants

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

RULES_WORKER = "server.match.rules.worker"


def start_demo(data: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", "--demo", "--port", "0", "--data", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env={**os.environ, "GGP_DATABASE_URL": "", "GGP_HOST_KEY": ""},
    )


def wait_for_rules_processes(service: subprocess.Popen[str], count: int) -> list[int]:
    """Poll until ``count`` rules processes run under the service; all its descendants."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = descendants(service.pid)
        if sum(RULES_WORKER in command_line(pid) for pid in found) >= count:
            return found
        assert service.poll() is None, service.communicate()[0]
        time.sleep(0.005)
    raise AssertionError("no rules process started within 60 s")


def left_behind(processes: list[int], seconds: float = 10) -> list[str]:
    deadline = time.monotonic() + seconds
    while True:
        running = [pid for pid in processes if alive(pid)]
        if not running or time.monotonic() > deadline:
            return [command_line(pid) for pid in running]
        time.sleep(0.1)


def test_ctrl_c_while_a_rules_template_loads_stops_the_service_in_one_line(
    tmp_path: Path,
) -> None:
    service = start_demo(tmp_path)
    try:
        # the first template is still importing its modules when the signal comes
        processes = wait_for_rules_processes(service, 1)
        os.killpg(service.pid, signal.SIGINT)
        output, _ = service.communicate(timeout=60)
    finally:
        if service.poll() is None:
            service.kill()
    assert service.returncode == 0, output
    lines = output.splitlines()
    assert lines[0].startswith("serving on http://127.0.0.1:") and ":0/" not in lines[0]
    assert lines[-1] == "stopping: running matches are aborted", output
    assert "Traceback" not in output and "panicked" not in output
    assert not [line for line in lines if line.startswith("error")], output
    assert left_behind(processes) == []


def test_a_killed_service_leaves_no_rules_process_or_player_behind(tmp_path: Path) -> None:
    service = start_demo(tmp_path)
    try:
        processes = wait_for_rules_processes(service, 3)  # the demo's three matches
        commands = [command_line(pid) for pid in processes]
        service.send_signal(signal.SIGKILL)
        service.wait(timeout=30)
    finally:
        if service.poll() is None:
            service.kill()
        service.communicate()
    assert sum("-m players " in command for command in commands) == 2, commands
    assert left_behind(processes) == []
