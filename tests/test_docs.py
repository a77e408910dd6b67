"""The README stays true: its settings table, its commands, and what .ci/run executes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from config import setting_specs, settings_table

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def _between(text: str, marker: str) -> str:
    match = re.search(rf"<!-- {marker} -->\n(.*?)<!-- /{marker} -->", text, re.S)
    assert match, f"README.md lacks the <!-- {marker} --> block"
    return match.group(1).strip()


def test_readme_settings_table_is_current() -> None:
    assert _between(README, "settings-table") == settings_table(), (
        "README's configuration table is stale: regenerate it with "
        "`python main.py config --table` between the settings-table markers"
    )


def test_env_example_lists_every_setting() -> None:
    example = (REPO / ".env.example").read_text()
    for spec in setting_specs():
        assert re.search(rf"^#? ?{spec.env}=", example, re.M), f"{spec.env} missing"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    block = _between(README, "test-command")
    command = "\n".join(line for line in block.splitlines() if not line.startswith("```"))
    extracted = subprocess.run(
        [
            "bash",
            "-c",
            r"""sed -n '/<!-- test-command -->/,/<!-- \/test-command -->/p' README.md \
          | grep -v '^<!--' | grep -v '^```'""",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert extracted == command
    assert "pytest" in command and "torch==2.13.0" in command
    assert "README.md" in (REPO / ".ci" / "run").read_text()


def test_readme_mcp_tool_table_is_current() -> None:
    from app.mcp.tools import default_tools_table

    assert _between(README, "mcp-tools") == default_tools_table(), (
        "README's MCP tool table is stale: regenerate it with "
        "`python main.py mcp --tools-table` between the mcp-tools markers"
    )
