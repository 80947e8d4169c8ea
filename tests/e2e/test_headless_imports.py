"""The import diet of the headless start (issue 24): the real `peri -p` process, observed with
Python's own `-X importtime` (every module a process imports, its threads' included, is one
line on stderr), loads nothing a plain text answer does not use."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.e2e.conftest import Peri

# What `peri -p` has no use for when the model answers in plain text and no MCP server, Bash
# command or token count is involved: the TUI's stack, Markdown, the tokenizer, MCP, the shell
# grammar, and the editor face.
UNUSED = ("textual", "rich", "markdown_it", "tiktoken", "mcp", "tree_sitter", "acp")


def imported(stderr: str) -> set[str]:
    """Every module name `-X importtime` reported."""
    return {m.group(1) for m in re.finditer(r"^import time:.*\|\s*(\S+)\s*$", stderr, re.M)}


def top_level(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def importtime(peri: Peri, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        check=False,
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_plain_answer_imports_no_ui_markdown_tokenizer_mcp_or_shell_grammar(
    peri: Peri, provider: str
) -> None:
    peri.provider = provider
    peri.server.set_script([{"text": "A plain answer."}])
    done = importtime(peri, "-m", "peri_cli", "-p", "hi")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "A plain answer.\n"
    modules = imported(done.stderr)
    packages = top_level(modules)
    assert "peri_cli.providers.procstream" in modules  # the observation works
    assert not packages & set(UNUSED), sorted(packages & set(UNUSED))
    # The SDK the answer came through was loaded by the stream worker, on another core while
    # this process loaded Peri: a process of its own, started before the door was imported.
    assert provider not in packages
    order = in_order(done.stderr)
    assert order.index("peri_cli.providers.prestart") < order.index("peri_cli.sdk")


def in_order(stderr: str) -> list[str]:
    """The modules `-X importtime` reported, in the order their imports ended."""
    return re.findall(r"^import time:.*\|\s*(\S+)\s*$", stderr, re.M)


def test_peri_version_imports_nothing_but_its_own_entry(peri: Peri) -> None:
    floor = importtime(peri, "-c", "pass")
    done = importtime(
        peri,
        "-c",
        "import sys; sys.argv = ['peri', '--version']; from peri_cli.cli import main; "
        "sys.exit(main())",
    )
    assert (done.returncode, done.stdout) == (0, "peri 0.1.0\n")
    extra = imported(done.stderr) - imported(floor.stderr)
    assert extra == {"peri_cli", "peri_cli.cli"}


def test_importing_the_sdk_imports_no_provider_sdk_until_a_query_runs(peri: Peri) -> None:
    peri.server.set_script([{"text": "from the door"}])
    script = """
import asyncio, sys
from pathlib import Path
import peri_cli.sdk as sdk

before = {m.split(".")[0] for m in sys.modules}

async def main():
    options = sdk.PeriOptions(cwd=Path.cwd(), provider="anthropic")
    async for event in sdk.query("hi", options):
        if isinstance(event, sdk.ResultEvent):
            print(event.result)

asyncio.run(main())
after = {m.split(".")[0] for m in sys.modules}
print(sorted({"anthropic", "openai", "httpx2", "textual", "rich", "mcp"} & before))
print(sorted({"anthropic", "openai"} & after))
"""
    done = importtime(peri, "-c", script)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["from the door", "[]", "['anthropic']"]


def test_a_provider_the_settings_name_is_used_though_the_early_worker_guessed_another(
    peri: Peri,
) -> None:
    """The worker is started before the settings are read, on a guess from the environment
    (both keys here: Anthropic). The settings name OpenAI: that run loads its SDK here."""
    peri.server.set_script([{"text": "Through the settings' provider."}])
    (peri.home / ".peri").mkdir(parents=True, exist_ok=True)
    (peri.home / ".peri" / "settings.json").write_text('{"provider": "openai"}')
    peri.extra_env = {
        "PERI_PROVIDER": "",
        "OPENAI_BASE_URL": peri.server.openai_url,
        "OPENAI_API_KEY": "sk-test-openai",
    }
    done = importtime(peri, "-m", "peri_cli", "-p", "hi")
    assert (done.returncode, done.stdout) == (0, "Through the settings' provider.\n")
    assert peri.server.requests[-1]["path"].endswith("/chat/completions")
    assert "openai" in top_level(imported(done.stderr))
