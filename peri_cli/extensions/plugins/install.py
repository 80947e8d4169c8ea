"""Adding marketplaces and installing plugins from them. A local folder is read in place; a git
URL or `owner/repo` is cloned (shallow, no prompts). An install copies the plugin into a
staging folder first, so the user sees what it brings, from the very files that will run,
before it is moved into place (`Staged.commit`) or thrown away (`Staged.discard`)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base.safe_read import is_inside
from peri_cli.extensions.plugins.fingerprint import changes, fingerprint
from peri_cli.extensions.plugins.manifest import (
    ListedPlugin,
    ManifestError,
    Marketplace,
    git_url,
    read_marketplace,
)
from peri_cli.extensions.plugins.parts import PluginParts, read_parts
from peri_cli.extensions.plugins.registry import (
    CLONES_DIR,
    STAGING_DIR,
    Installed,
    KnownMarketplace,
    PluginError,
    forget_installed,
    forget_marketplace,
    installed,
    marketplaces,
    plugin_root,
    plugins_dir,
    record_installed,
    remember_marketplace,
    split_key,
)

GIT_TIMEOUT = 300
# A plugin is commands, scripts and a server or two; past these it is refused before a copy fills
# the disk (a marketplace entry can point at any folder of a large repository).
MAX_PLUGIN_BYTES = 256 * 1024 * 1024
MAX_PLUGIN_FILES = 20_000
STALE_SECONDS = 3600
_OWNER_REPO = re.compile(r"[\w.-]+/[\w.-]+")


def _git(*args: str, cwd: Path | None = None) -> None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise PluginError("git is not installed; a local folder works without it") from None
    except subprocess.TimeoutExpired:
        raise PluginError(f"git {args[0]} took longer than {GIT_TIMEOUT} s; stopped") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise PluginError(f"git {args[0]} failed: {last[:300]}")


def _clone(url: str, dest: Path, ref: str = "") -> None:
    branch = ["--branch", ref] if ref else []
    _git("clone", "--quiet", "--depth", "1", *branch, "--", url, str(dest))


def add_marketplace(peri_home: Path, source: str, *, cwd: Path) -> Marketplace:
    """Add a marketplace by folder, git URL or `owner/repo`; its name is the one it declares."""
    folder = (cwd / source).expanduser()
    if folder.is_dir():
        root = folder.resolve()
        found = _read_market(root)
        _check_new(peri_home, found.name, str(root))
        remember_marketplace(peri_home, KnownMarketplace(found.name, source, "folder", root))
        return found
    url = f"https://github.com/{source}.git" if _OWNER_REPO.fullmatch(source) else source
    try:
        url = git_url(url)
    except ManifestError:
        raise PluginError(f"{source}: not a folder, a git URL or owner/repo") from None
    clones = plugins_dir(peri_home) / CLONES_DIR
    clones.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=clones) as tmp:
        _clone(url, Path(tmp) / "repo")
        found = _read_market(Path(tmp) / "repo")
        _check_new(peri_home, found.name, source)
        dest = clones / found.name
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(Path(tmp) / "repo", dest)
    remember_marketplace(peri_home, KnownMarketplace(found.name, source, "git", dest))
    return found


def _read_market(root: Path) -> Marketplace:
    try:
        return read_marketplace(root)
    except ManifestError as e:
        raise PluginError(f"not a marketplace: {e}") from None


def _check_new(peri_home: Path, name: str, source: str) -> None:
    known = marketplaces(peri_home).get(name)
    if known is not None and known.source not in (source, str(known.path)):
        raise PluginError(
            f"a marketplace named {name} is already added (from {known.source}); "
            f"`peri plugin marketplace remove {name}` first"
        )


def marketplace(peri_home: Path, name: str) -> tuple[KnownMarketplace, Marketplace]:
    known = marketplaces(peri_home).get(name)
    if known is None:
        raise PluginError(f"no marketplace named {name}; see `peri plugin marketplace list`")
    return known, _read_market(known.path)


def update_marketplace(peri_home: Path, name: str) -> Marketplace:
    """A git marketplace fetched again (a folder is read as it is now)."""
    known, _ = marketplace(peri_home, name)
    if known.kind == "git":
        _git("fetch", "--quiet", "--depth", "1", "origin", cwd=known.path)
        _git("reset", "--quiet", "--hard", "FETCH_HEAD", cwd=known.path)
    return _read_market(known.path)


def remove_marketplace(peri_home: Path, name: str) -> None:
    known, _ = marketplace(peri_home, name)
    if known.kind == "git":
        shutil.rmtree(known.path, ignore_errors=True)
    forget_marketplace(peri_home, name)


@dataclass
class Staged:
    """A plugin copied and read, not yet in place: what the question shows."""

    peri_home: Path
    key: str
    listed: ListedPlugin
    folder: Path
    parts: PluginParts
    before: Installed | None  # the copy it would replace
    prints: dict[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> list[str]:
        """What changes in what runs code, against the installed copy (empty: nothing)."""
        return changes(self.before.fingerprint, self.prints) if self.before else []

    def commit(self) -> Installed:
        name, market = split_key(self.key)
        dest = plugin_root(self.peri_home, market, name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        old = dest.with_name(f".{name}.old")
        shutil.rmtree(old, ignore_errors=True)
        if dest.exists():
            os.replace(dest, old)
        os.replace(self.folder, dest)
        shutil.rmtree(old, ignore_errors=True)
        self.discard()
        item = Installed(
            self.key, self.parts.manifest.version or self.listed.version, dest, self.prints
        )
        record_installed(self.peri_home, item, self.listed.source.describe())
        return item

    def discard(self) -> None:
        shutil.rmtree(self.folder.parent, ignore_errors=True)


def stage(peri_home: Path, key: str) -> Staged:
    """Copy `name@marketplace` into staging and read it; nothing is installed yet."""
    name, market = split_key(key)
    known, found = marketplace(peri_home, market)
    listed = next((p for p in found.plugins if p.name == name), None)
    if listed is None:
        raise PluginError(f"{market} lists no plugin named {name}")
    staging = plugins_dir(peri_home) / STAGING_DIR
    staging.mkdir(parents=True, exist_ok=True)
    _sweep(staging)
    work = Path(tempfile.mkdtemp(dir=staging))
    try:
        folder = work / name
        if listed.source.git:
            _clone(listed.source.git, work / "src", listed.source.ref)
            _copy(work / "src", folder)
        else:
            source = known.path / listed.source.path
            if not (source.is_dir() and is_inside(source, known.path)):
                raise PluginError(f"{key}: its folder {listed.source.path} is not in {market}")
            _copy(source, folder)
        try:
            parts = read_parts(folder, key, name)
        except ManifestError as e:
            raise PluginError(f"{key}: {e}") from None
        before = installed(peri_home).get(key)
        return Staged(peri_home, key, listed, folder, parts, before, fingerprint(folder))
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _sweep(staging: Path) -> None:
    """What an install killed half-way left in staging (older than an hour: not one running)."""
    for old in staging.iterdir():
        with contextlib.suppress(OSError):
            if time.time() - old.lstat().st_mtime > STALE_SECONDS:
                shutil.rmtree(old, ignore_errors=True)


def _copy(source: Path, dest: Path) -> None:
    """The plugin's files; a symlink that leads out of it is left out (it would read what the
    plugin does not hold), `.git` too."""
    root = source.resolve()
    _check_size(source)

    def ignore(folder: str, names: list[str]) -> list[str]:
        out = [n for n in names if n == ".git"]
        for n in names:
            p = Path(folder) / n
            if p.is_symlink() and not is_inside(p, root):
                out.append(n)
            elif not (p.is_symlink() or p.is_dir() or p.is_file()):
                out.append(n)  # a FIFO or a device
        return out

    try:
        shutil.copytree(source, dest, symlinks=True, ignore=ignore)
    except (OSError, shutil.Error) as e:
        raise PluginError(f"could not copy the plugin: {e}") from None


def _check_size(source: Path) -> None:
    """Refuse a plugin folder over MAX_PLUGIN_BYTES or MAX_PLUGIN_FILES (`.git` left out, as
    the copy leaves it), counted before anything is copied."""
    size = files = 0
    for folder, dirs, names in os.walk(source):
        dirs[:] = [d for d in dirs if d != ".git"]
        for n in names:
            with contextlib.suppress(OSError):
                size += os.lstat(os.path.join(folder, n)).st_size
            files += 1
            if files > MAX_PLUGIN_FILES:
                raise PluginError(
                    f"the plugin has more than {MAX_PLUGIN_FILES:,} files; not installed"
                )
            if size > MAX_PLUGIN_BYTES:
                raise PluginError(
                    f"the plugin is larger than {MAX_PLUGIN_BYTES // 2**20} MiB; not installed"
                )


def uninstall(peri_home: Path, key: str) -> None:
    item = installed(peri_home).get(key)
    if item is None:
        raise PluginError(f"{key} is not installed; see `peri plugin list`")
    with contextlib.suppress(OSError):
        shutil.rmtree(item.root)
    forget_installed(peri_home, key)
