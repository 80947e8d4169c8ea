"""Fixed scenes for the snapshot tests and the README screenshots: the same sessions, times and
clock every run, and a fresh token counter (the shared one is calibrated by earlier tests), so
the pictures only change when the TUI does."""

from __future__ import annotations

from pathlib import Path

from peri_cli.base.messages import ToolUsePart, Usage
from peri_cli.context.tokens import TokenCounter
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.sdk.runtime import Runtime
from peri_cli.tui.app import PeriApp

from .harness import FIXED_NOW, assistant, make_runtime, results, user, write_session

SIZE = (110, 36)
# The scenes' tools, named once: a tool added to Peri changes neither the tools list the status
# bar and /context count nor the pictures.
SCENE_TOOLS = frozenset(
    {"Read", "Write", "Edit", "Bash", "Glob", "Grep", "Agent", "WebFetch", "Skill"}
)
COUNTER = TokenCounter()  # never calibrated: the app only reads it
MAIN_ID = "0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
USAGE = Usage(input_tokens=1_850, output_tokens=420, cache_read_input_tokens=14_200)

ANSWER = """The failing test is `test_parse_empty`: `parse("")` raises instead of returning `[]`.

```python
def parse(text: str) -> list[Token]:
    if not text.strip():
        return []
    return list(tokenize(text))
```

I added the early return and ran the suite: **42 passed**. Anything else?"""


def main_session(runtime: Runtime) -> None:
    bash = ToolUsePart(id="t1", name="Bash", input={"command": "pytest -q tests/test_parser.py"})
    write_session(
        runtime.store,
        MAIN_ID,
        [
            user("Why does test_parse_empty fail? Fix it."),
            assistant("Let me run the test first.", bash),
            results(
                (
                    "t1",
                    "F.\nFAILED tests/test_parser.py::test_parse_empty - ValueError\n"
                    "1 failed, 1 passed",
                )
            ),
            assistant(ANSWER),
        ],
        guide_files=["AGENTS.md"],
        usage=USAGE,
    )
    runtime.start_existing(MAIN_ID, fork=False)


def main_screen(tmp_path: Path) -> PeriApp:
    runtime = make_runtime(tmp_path, new_session=False, builtin_names=SCENE_TOOLS)
    main_session(runtime)
    return PeriApp(runtime, clock=lambda: FIXED_NOW, counter=COUNTER)


def diff_screen(tmp_path: Path) -> PeriApp:
    runtime = make_runtime(tmp_path, new_session=False, builtin_names=SCENE_TOOLS)
    edit = ToolUsePart(
        id="t1",
        name="Edit",
        input={
            "file_path": "src/parser.py",
            "old_string": "def parse(text: str) -> list[Token]:\n    return list(tokenize(text))\n",
            "new_string": (
                "def parse(text: str) -> list[Token]:\n    if not text.strip():\n"
                "        return []\n    return list(tokenize(text))\n"
            ),
        },
    )
    write = ToolUsePart(
        id="t2",
        name="Write",
        input={"file_path": "CHANGELOG.md", "content": "# Changelog\n\n- parse('') returns []\n"},
    )
    write_session(
        runtime.store,
        MAIN_ID,
        [
            user("Make parse('') return an empty list and note it in the changelog."),
            assistant("I'll add an early return.", edit, write),
            results(
                ("t1", "Edited src/parser.py: replaced 1 occurrence."),
                ("t2", "Wrote CHANGELOG.md (3 lines)."),
            ),
            assistant("Done: `parse('')` now returns `[]`, and the changelog says so."),
        ],
        usage=USAGE,
    )
    runtime.start_existing(MAIN_ID, fork=False)
    return PeriApp(runtime, clock=lambda: FIXED_NOW, counter=COUNTER)


def permission_screen(tmp_path: Path) -> PeriApp:
    reply = ScriptedReply(
        text="I'll create the config file.",
        tool_calls=[
            ScriptedCall(
                "Write",
                {"file_path": "peri.toml", "content": '[tool.peri]\nmodel = "claude-sonnet-4-5"\n'},
            )
        ],
        usage=USAGE,
    )
    runtime = make_runtime(tmp_path, [reply], new_session=False, builtin_names=SCENE_TOOLS)
    write_session(runtime.store, MAIN_ID, [], guide_files=["AGENTS.md"])
    runtime.start_existing(MAIN_ID, fork=False)
    return PeriApp(
        runtime,
        "Add a peri.toml with the default model.",
        clock=lambda: FIXED_NOW,
        counter=COUNTER,
    )


def picker_screen(tmp_path: Path) -> PeriApp:
    runtime = make_runtime(tmp_path, new_session=False, builtin_names=SCENE_TOOLS)
    rows = [
        (
            "0198a1b2-0000-7000-8000-000000000001",
            "Why does test_parse_empty fail? Fix it.",
            300,
            6,
            None,
        ),
        (
            "0198a0f1-0000-7000-8000-000000000002",
            "Try the streaming parser instead",
            4_000,
            12,
            "0198a1b2-0000-7000-8000-000000000001",
        ),
        (
            "01989e42-0000-7000-8000-000000000003",
            "Add a --json flag to `peri sessions`",
            90_000,
            31,
            None,
        ),
        (
            "01987c0d-0000-7000-8000-000000000004",
            "Profile the tokenizer on big files",
            3 * 86_400,
            54,
            None,
        ),
        (
            "01975a3e-0000-7000-8000-000000000005",
            "Write the README quick start",
            12 * 86_400,
            9,
            None,
        ),
    ]
    for session_id, title, age, count, parent in rows:
        messages = [user(title)] + [
            assistant("ok") if i % 2 == 0 else user("go on") for i in range(count - 1)
        ]
        write_session(runtime.store, session_id, messages, age=age, parent=parent)
    return PeriApp(runtime, clock=lambda: FIXED_NOW, counter=COUNTER)


HEREDOC = "\n".join(
    ["cat <<'EOF' > build.sh", *(f"echo step {i}" for i in range(1, 11)), "EOF; rm -rf ~/work"]
)


def long_bash_screen(tmp_path: Path) -> PeriApp:
    """A 12-line command asked for in a 60x20 terminal: the body scrolls, the question stays."""
    reply = ScriptedReply(
        text="I'll write the build script.",
        tool_calls=[ScriptedCall("Bash", {"command": HEREDOC, "description": "build script"})],
        usage=USAGE,
    )
    runtime = make_runtime(tmp_path, [reply], new_session=False, builtin_names=SCENE_TOOLS)
    write_session(runtime.store, MAIN_ID, [])
    runtime.start_existing(MAIN_ID, fork=False)
    return PeriApp(runtime, "Write the build script.", clock=lambda: FIXED_NOW, counter=COUNTER)
