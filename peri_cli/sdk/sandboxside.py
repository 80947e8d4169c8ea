"""The runtime's sandbox side: the session's `sandbox` settings as trust allows, the availability
check, the policy and the `CommandSandbox` the tools get, the permission gate, and `/sandbox`'s
status and switches."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from peri_cli.agent.host import HeldPath, StartupError
from peri_cli.base import programs
from peri_cli.base.events import PermissionRequested
from peri_cli.base.settings_check import SettingsError
from peri_cli.base.settings_sandbox import SandboxSettings, merge_sandbox
from peri_cli.base.textsafe import visible
from peri_cli.base.tool import CommandSandbox
from peri_cli.permissions.call_facts import RuleContext
from peri_cli.permissions.rule_sources import RuleSet
from peri_cli.permissions.rulefile import RuleFileError
from peri_cli.permissions.sandbox_file import SWITCHES, write_switch
from peri_cli.permissions.sandbox_policy import (
    SandboxPlaces,
    SandboxPolicy,
    build_policy,
    resolve_path,
)
from peri_cli.permissions.sandboxing import SandboxGate, excluded_rules
from peri_cli.sandbox.allowlist import keep_domain
from peri_cli.sandbox.asking import ask_through_events
from peri_cli.sandbox.gate import Answer, Ask, Scope
from peri_cli.sandbox.netside import SOCKET_NAME, SessionNetwork
from peri_cli.sandbox.probe import Availability, probe
from peri_cli.sandbox.runner import BwrapSandbox, SeatbeltSandbox
from peri_cli.sdk import sandboxreload
from peri_cli.sdk.installplace import inside_warning, peri_inside
from peri_cli.session.store import REFUSED_DIR
from peri_cli.tools.bashsandbox import helper_roots

if TYPE_CHECKING:
    from collections.abc import Mapping

    from peri_cli.base.settings import LoadedSettings, SettingsLayer

# Starts the domain proxy for a policy and returns its Unix socket (None: no network inside).
ProxyStarter = Callable[[SandboxPolicy], Path | None]


def sandbox_settings(
    loaded: LoadedSettings | None, *, trusted: bool
) -> tuple[SandboxSettings, list[str]]:
    """The `sandbox` object of the settings files: a workspace file that is not trusted may
    only narrow it."""
    if loaded is None:
        return SandboxSettings(), []
    return _merged(loaded.layers, trusted=trusted)


def _merged(layers: Iterable[SettingsLayer], *, trusted: bool) -> tuple[SandboxSettings, list[str]]:
    return merge_sandbox(
        (layer.path, trusted or not layer.from_workspace, layer.data["sandbox"])
        for layer in layers
        if isinstance(layer.data.get("sandbox"), dict)
    )


class SandboxSide:
    """Mixed into `Runtime`: the Bash sandbox of one run."""

    if TYPE_CHECKING:
        workspace: Path
        peri_home: Path
        env: Mapping[str, str]
        loaded: LoadedSettings | None
        warnings: list[str]
        rules: RuleSet

        @property
        def trusted(self) -> bool: ...

    _sandbox: SandboxSettings | None = None
    _sandbox_runner: BwrapSandbox | None = None
    _sandbox_tmp: Path | None = None
    _sandbox_told = False
    _peri_inside: Path | None = None  # where Peri runs from, when sandboxed commands may write it
    start_proxy: ProxyStarter | None = None  # replaces the session's own proxy (`_start_network`)
    _network: SessionNetwork | None = None
    # Who answers a new domain (the face sets it: `network_ask`, `ask_network_through`); None:
    # denied unless allowed, as headless.
    network_asker: Ask | None = None
    # Who shows the sandbox's notes (a domain's "always" not saved) as they happen (the TUI);
    # None: they wait in `sandbox_notes` for the run's end (`take_sandbox_notes`).
    sandbox_noticer: Callable[[str], None] | None = None
    _sandbox_notes: list[str] | None = None
    _sandbox_home: Path | None = None
    _sandbox_stamp: sandboxreload.Stamp | None = None
    _sandbox_loop: asyncio.AbstractEventLoop | None = None  # where the commands run
    _held_asked: frozenset[Path] = frozenset()  # held paths answered about (`confirm_held`)
    # The settings layers this session reads (a program's `setting_sources`; None: all of them),
    # which a sandboxed command's start reads again when they changed.
    sandbox_sources: Collection[Scope] | None = None

    def check_sandbox(self) -> None:
        """Read the settings and check availability; StartupError when it is required and cannot
        run. Says once why it is unavailable."""
        self.close_sandbox()  # built again from these settings when the agent is
        programs.guard(self, (self.workspace,))  # before the probe looks for bwrap
        try:
            self._sandbox, problems = sandbox_settings(self.loaded, trusted=self.trusted)
        except SettingsError as e:
            raise StartupError(str(e), exit_code=2) from e
        self.warnings.extend(problems)
        if not self._sandbox.enabled:
            return
        found = probe()
        if found.available:
            self._check_peri_place()
        if found.available or self._sandbox_told:
            return
        self._sandbox_told = True
        if self._sandbox.failIfUnavailable:
            raise StartupError(
                f"the sandbox is required (sandbox.failIfUnavailable) but cannot run: "
                f"{found.why_not}"
            )
        self.warnings.append(f"sandbox unavailable, commands ask as usual: {found.why_not}")

    def _check_peri_place(self) -> None:
        """Auto-allow off, said once, while Peri runs from where sandboxed commands write."""
        assert self._sandbox is not None
        home = Path(self.env.get("HOME", str(Path.home())))
        places = SandboxPlaces(self.workspace, home, self.peri_home, self.workspace, self.env)
        extra = (resolve_path(p, places) for p in self._sandbox.filesystem.allowWrite)
        self._peri_inside = peri_inside((self.workspace, *extra))
        if self._peri_inside is not None and self._sandbox.autoAllowBashIfSandboxed:
            self.warnings.append(inside_warning(self._peri_inside, self.workspace))

    @property
    def sandbox_active(self) -> bool:
        return self._sandbox is not None and self._sandbox.enabled and probe().available

    def sandbox_gate(self) -> SandboxGate:
        s = self._sandbox or SandboxSettings()
        return SandboxGate(
            active=self.sandbox_active,
            auto_allow=s.autoAllowBashIfSandboxed and self._peri_inside is None,
            allow_unsandboxed=s.allowUnsandboxedCommands,
            excluded=tuple(excluded_rules(s.excludedCommands)),
        )

    def command_sandbox(self, home: Path) -> CommandSandbox | None:
        """The sandbox the tools run commands in (None: off or unavailable)."""
        if not self.sandbox_active:
            return None
        if self._sandbox_runner is None:
            self._sandbox_tmp = Path(tempfile.mkdtemp(prefix="peri-session-"))
            self._sandbox_home = home
            self._sandbox_stamp = sandboxreload.stamp(self._watched().values())
            policy = self._policy()
            programs.guard(self, policy.writable)
            if probe().socat:
                policy = policy.with_proxy((self.start_proxy or self._start_network)(policy))
            context = RuleContext(self.workspace, self.trusted, home)
            network = self._network

            def before() -> None:
                with contextlib.suppress(RuntimeError):
                    self._sandbox_loop = asyncio.get_running_loop()
                self.refresh_sandbox()
                if network is not None:
                    network.serve()

            runner = SeatbeltSandbox if probe().seatbelt else BwrapSandbox
            self._sandbox_runner = runner(
                policy,
                lambda c: self.sandbox_gate().is_excluded(c, context),
                before=before,
                gate=network.gate if network is not None else None,
                refused=self._refused_dir,
                on_report=self._protected_report,
            )
        return self._sandbox_runner

    def _policy(self) -> SandboxPolicy:
        assert self._sandbox is not None and self._sandbox_tmp is not None
        assert self._sandbox_home is not None
        places = SandboxPlaces(
            self.workspace,
            self._sandbox_home,
            self.peri_home,
            self._sandbox_tmp,
            self.env,
            runtime=helper_roots(),
        )
        return build_policy(self._sandbox, places, self.rules.rules, trusted=self.trusted)

    def _refused_dir(self) -> Path | None:
        """Where this session keeps what the protected-path check moved aside."""
        session = getattr(self, "session", None)
        return None if session is None else self.peri_home / REFUSED_DIR / session.id

    def _protected_report(self, lines: list[str]) -> None:
        """What the protected-path check found, for the user (from any thread: the check also
        runs every 2 s beside a long command)."""
        loop = self._sandbox_loop
        for line in lines:
            if loop is not None and not loop.is_closed() and not _on_loop(loop):
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._sandbox_note, line)
            else:
                self._sandbox_note(line)

    def _watched(self) -> dict[Scope, Path]:
        return sandboxreload.watched(self.sandbox_sources, self.workspace, self.peri_home)

    def refresh_sandbox(self) -> None:
        """Settings files changed since the last command: the next command runs under the
        policy they give now (paths, domains, excluded commands, the switches). Whether the
        sandbox is on at all stays as the session started (tools were given it or not)."""
        runner, files = self._sandbox_runner, self._watched()
        now = sandboxreload.stamp(files.values())
        if runner is None or self._sandbox is None or now == self._sandbox_stamp:
            return
        self._sandbox_stamp = now
        try:
            layers = sandboxreload.reread(self.loaded, files, self.workspace, self.peri_home)
            fresh, _ = _merged(layers, trusted=self.trusted)
        except SettingsError as e:
            self._sandbox_note(f"sandbox settings not applied (the last ones stay): {e}")
            return
        self._sandbox = fresh.model_copy(update={"enabled": self._sandbox.enabled})
        runner.policy = self._policy().with_proxy(runner.policy.proxy_socket)
        programs.guard(self, runner.policy.writable)
        if self._network is not None:
            self._network.gate.set_lists(runner.policy.domains, runner.policy.denied_domains)
        self._apply_gate()

    def _apply_gate(self) -> None:
        agent = getattr(self, "agent", None)
        if agent is not None:  # SubAgents share its policy
            agent.policy.sandbox = self.sandbox_gate()

    def _start_network(self, policy: SandboxPolicy) -> Path | None:
        """The session's domain proxy, on a private socket in its temporary directory."""
        assert self._sandbox_tmp is not None
        try:
            self._network = SessionNetwork(
                self._sandbox_tmp / SOCKET_NAME,
                policy.domains,
                policy.denied_domains,
                ask=self._ask_domain,
                remember=self._remember_domain,
                on_note=self._sandbox_note,
            )
        except OSError as e:
            self.warnings.append(f"sandbox: no network inside, the proxy cannot start: {e}")
            return None
        return self._network.socket_path

    async def _ask_domain(self, domain: str) -> Answer:
        ask = self.network_asker
        return "deny" if ask is None else await ask(domain)

    def _remember_domain(self, domain: str, scope: Scope) -> None:
        """ "Always": `sandbox.network.allowedDomains` of the settings layer the user picked;
        read back next session as any allowed domain is (and now: the stamp moves)."""
        path = keep_domain(scope, self.workspace, self.peri_home, domain)
        if scope != "user" and not self.trusted:  # (a workspace's file may only narrow it then)
            self._sandbox_note(
                f"{domain} saved to {path}, but this workspace is not trusted: its files may "
                "only narrow the sandbox, so the domain is asked again next session until you "
                "trust the workspace (or keep it in your user settings)"
            )

    def _sandbox_note(self, text: str) -> None:
        line = f"sandbox: {visible(text)}"
        if self.sandbox_noticer is not None:
            self.sandbox_noticer(line)
            return
        if self._sandbox_notes is None:
            self._sandbox_notes = []
        self._sandbox_notes.append(line)

    def take_sandbox_notes(self) -> list[str]:
        """The notes no face has shown yet (the SDK makes them warnings at a run's end)."""
        notes, self._sandbox_notes = self._sandbox_notes or [], None
        return notes

    def ask_network_through(self, emit: Callable[[PermissionRequested], None]) -> None:
        """A face that answers events (the TUI): each new domain is a `PermissionRequested`
        for the tool "Network" handed to `emit`, answered through its future."""
        self.network_asker = ask_through_events(emit)

    def sandbox_status(self) -> list[str]:
        """What `/sandbox` shows: on or off, the dependencies, the resolved paths and domains."""
        s = self._sandbox or SandboxSettings()
        found: Availability = probe()
        state = "on" if self.sandbox_active else ("off" if not s.enabled else "unavailable")
        lines = [
            f"Sandbox: {state} (sandbox.enabled is {str(s.enabled).lower()})",
            f"Dependencies: {found.describe()}",
            f"Auto-allow sandboxed Bash: {_on(s.autoAllowBashIfSandboxed)}; "
            f"unsandboxed fallback: {_on(s.allowUnsandboxedCommands)}",
        ]
        if self._peri_inside is not None:
            lines.append(inside_warning(self._peri_inside, self.workspace))
        runner = self._sandbox_runner
        if runner is not None:
            lines += _policy_lines(runner.current_policy())
        lines.append(
            "Switch with /sandbox auto on|off or /sandbox fallback on|off "
            "(saved to .peri/settings.local.json)"
        )
        return lines

    def held_back(self) -> list[HeldPath]:
        """What the protected-path check holds back that the user was not asked about yet."""
        runner = self._sandbox_runner
        if runner is None:
            return []
        asked = self._held_asked
        return [
            HeldPath(path.relative_to(runner.guard.workspace).as_posix(), why)
            for path, why in runner.guard.held_paths().items()
            if path not in asked
        ]

    def confirm_held(self, path: str, load: bool | None) -> None:
        runner = self._sandbox_runner
        if runner is None or load is None:
            return
        full = runner.guard.workspace / path
        self._held_asked = self._held_asked | {full}
        if load:
            runner.guard.release(full)

    def sandbox_switch(self, name: str, value: bool) -> str:
        """Turn auto-allow or the unsandboxed fallback on or off, now and in the local file."""
        key = SWITCHES.get(name)
        if key is None:
            return f"unknown switch {visible(name)!r}; use auto or fallback"
        try:
            path = write_switch(self.workspace, key, value)
        except (OSError, ValueError, RuleFileError) as e:
            return f"could not save sandbox.{key}: {visible(str(e))}"
        self._sandbox = (self._sandbox or SandboxSettings()).model_copy(update={key: value})
        self._apply_gate()
        said = f"sandbox.{key} is now {str(value).lower()} (saved to {path})"
        if name == "auto" and value and self._peri_inside is not None:
            said += f"; it has no effect while {inside_warning(self._peri_inside, self.workspace)}"
        return said

    def close_sandbox(self) -> None:
        programs.release(self)
        if self._network is not None:
            self._network.close()
            self._network = None
        if self._sandbox_runner is not None:
            self._sandbox_runner.close()
            self._sandbox_runner = None
        if self._sandbox_tmp is not None:
            shutil.rmtree(self._sandbox_tmp, ignore_errors=True)
            self._sandbox_tmp = None


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return threading.current_thread() is threading.main_thread() and not loop.is_running()


def _on(value: bool) -> str:
    return "on" if value else "off"


def _policy_lines(policy: SandboxPolicy) -> list[str]:
    def show(paths: tuple[Path, ...]) -> str:
        return ", ".join(visible(str(p)) for p in paths) or "none"

    domains = ", ".join(visible(d) for d in policy.domains) or "none"
    network = "through the domain proxy" if policy.proxy_socket is not None else "none"
    return [
        f"Writable: {show(policy.writable)}",
        f"Read-only: {show((*policy.read_only, *policy.guarded, *policy.protected))}",
        f"Hidden: {show(policy.hidden)}",
        f"Masked (fresh tmpfs): {show(policy.masked)}",
        f"Unix sockets allowed: {show(policy.unix_sockets)}",
        f"Network: {network}; allowed domains: {domains}",
    ]
