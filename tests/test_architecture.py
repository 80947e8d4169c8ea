"""The house in rooms: import contracts hold (import-linter), and no module, function or folder
outgrows what a reader can hold."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "peri_cli"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def test_import_contracts_hold() -> None:
    exe = Path(sys.executable).parent / "lint-imports"
    if not exe.exists():
        exe = Path(shutil.which("lint-imports") or "lint-imports")
    done = subprocess.run(
        [str(exe), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr


def test_the_contracts_count_type_checking_imports() -> None:
    """An import under TYPE_CHECKING is still an arrow: the option stays off."""
    text = (ROOT / "pyproject.toml").read_text()
    assert "exclude_type_checking_imports = true" not in text
    assert 'type = "layers"' in text and 'type = "acyclic_siblings"' in text


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_over_400_lines() -> None:
    big = [f"{p.relative_to(ROOT)} ({lines(p)})" for p in modules() if lines(p) > MAX_MODULE_LINES]
    assert big == []


def long_functions(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]


def test_no_function_over_60_lines() -> None:
    assert [f for p in modules() for f in long_functions(p)] == []


def test_no_folder_holds_a_quarter_of_the_package() -> None:
    total = sum(lines(p) for p in modules())
    by_folder: dict[Path, int] = {}
    for p in modules():
        by_folder[p.parent] = by_folder.get(p.parent, 0) + lines(p)
    crowded = {str(d.relative_to(ROOT)): n for d, n in by_folder.items() if n * 4 > total}
    assert crowded == {}


def test_every_room_says_what_it_owns() -> None:
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{init.relative_to(ROOT)} has no docstring"


def test_the_function_check_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    probe = tmp_path / "probe.py"
    probe.write_text(f"def f():\n{body}\n")
    assert long_functions(probe, tmp_path) == ["probe.py:1 f (61)"]
