"""The runtime's sandbox side: the session's `sandbox` settings as trust allows, the availability
check, the policy and the `CommandSandbox` the tools get, the permission gate, and `/sandbox`'s
status and switches."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from peri_cli.agent.host import StartupError
from peri_cli.base.events import PermissionRequested
from peri_cli.base.settings_check import SettingsError
from peri_cli.base.settings_sandbox import SandboxSettings, merge_sandbox
from peri_cli.base.textsafe import visible
from peri_cli.base.tool import CommandSandbox
from peri_cli.permissions.call_facts import RuleContext
from peri_cli.permissions.rule_sources import RuleSet
from peri_cli.permissions.rulefile import LOCAL_SETTINGS_FILE, RuleFileError
from peri_cli.permissions.sandbox_file import SWITCHES, write_switch
from peri_cli.permissions.sandbox_policy import SandboxPlaces, SandboxPolicy, build_policy
from peri_cli.permissions.sandboxing import SandboxGate, excluded_rules
from peri_cli.sandbox.allowlist import add_allowed_domain
from peri_cli.sandbox.asking import ask_through_events
from peri_cli.sandbox.gate import Answer, Ask
from peri_cli.sandbox.netside import SOCKET_NAME, SessionNetwork
from peri_cli.sandbox.probe import Availability, probe
from peri_cli.sandbox.runner import BwrapSandbox

if TYPE_CHECKING:
    from collections.abc import Mapping

    from peri_cli.base.settings import LoadedSettings

# Starts the domain proxy for a policy and returns its Unix socket (None: no network inside).
ProxyStarter = Callable[[SandboxPolicy], Path | None]


def sandbox_settings(
    loaded: LoadedSettings | None, *, trusted: bool
) -> tuple[SandboxSettings, list[str]]:
    """The `sandbox` object of the settings files: a workspace file that is not trusted may
    only narrow it."""
    if loaded is None:
        return SandboxSettings(), []
    return merge_sandbox(
        (layer.path, trusted or not layer.from_workspace, layer.data["sandbox"])
        for layer in loaded.layers
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
    start_proxy: ProxyStarter | None = None  # replaces the session's own proxy (`_start_network`)
    _network: SessionNetwork | None = None
    # Who answers a new domain (the face sets it: `network_ask`, `ask_network_through`); None:
    # denied unless allowed, as headless.
    network_asker: Ask | None = None

    def check_sandbox(self) -> None:
        """Read the settings and check availability; StartupError when it is required and cannot
        run. Says once why it is unavailable."""
        self.close_sandbox()  # built again from these settings when the agent is
        try:
            self._sandbox, problems = sandbox_settings(self.loaded, trusted=self.trusted)
        except SettingsError as e:
            raise StartupError(str(e), exit_code=2) from e
        self.warnings.extend(problems)
        if not self._sandbox.enabled:
            return
        found = probe()
        if found.available or self._sandbox_told:
            return
        self._sandbox_told = True
        if self._sandbox.failIfUnavailable:
            raise StartupError(
                f"the sandbox is required (sandbox.failIfUnavailable) but cannot run: "
                f"{found.why_not}"
            )
        self.warnings.append(f"sandbox unavailable, commands ask as usual: {found.why_not}")

    @property
    def sandbox_active(self) -> bool:
        return self._sandbox is not None and self._sandbox.enabled and probe().available

    def sandbox_gate(self) -> SandboxGate:
        s = self._sandbox or SandboxSettings()
        return SandboxGate(
            active=self.sandbox_active,
            auto_allow=s.autoAllowBashIfSandboxed,
            allow_unsandboxed=s.allowUnsandboxedCommands,
            excluded=tuple(excluded_rules(s.excludedCommands)),
        )

    def command_sandbox(self, home: Path) -> CommandSandbox | None:
        """The sandbox the tools run commands in (None: off or unavailable)."""
        if not self.sandbox_active:
            return None
        if self._sandbox_runner is None:
            assert self._sandbox is not None
            self._sandbox_tmp = Path(tempfile.mkdtemp(prefix="peri-session-"))
            places = SandboxPlaces(
                self.workspace, home, self.peri_home, self._sandbox_tmp, self.env
            )
            policy = build_policy(self._sandbox, places, self.rules.rules, trusted=self.trusted)
            if probe().socat:
                policy = policy.with_proxy((self.start_proxy or self._start_network)(policy))
            gate = self.sandbox_gate()
            context = RuleContext(self.workspace, self.trusted, home)
            network = self._network
            self._sandbox_runner = BwrapSandbox(
                policy,
                lambda c: gate.is_excluded(c, context),
                before=network.serve if network is not None else lambda: None,
            )
        return self._sandbox_runner

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
            )
        except OSError as e:
            self.warnings.append(f"sandbox: no network inside, the proxy cannot start: {e}")
            return None
        return self._network.socket_path

    async def _ask_domain(self, domain: str) -> Answer:
        ask = self.network_asker
        return "deny" if ask is None else await ask(domain)

    def _remember_domain(self, domain: str) -> None:
        """ "Always": the workspace's local settings (`sandbox.network.allowedDomains`)."""
        add_allowed_domain(self.workspace / ".peri" / LOCAL_SETTINGS_FILE, domain)

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
        runner = self._sandbox_runner
        if runner is not None:
            lines += _policy_lines(runner.policy)
        lines.append(
            "Switch with /sandbox auto on|off or /sandbox fallback on|off "
            "(saved to .peri/settings.local.json)"
        )
        return lines

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
        agent = getattr(self, "agent", None)
        if agent is not None:
            agent.policy.sandbox = self.sandbox_gate()
        return f"sandbox.{key} is now {str(value).lower()} (saved to {path})"

    def close_sandbox(self) -> None:
        if self._network is not None:
            self._network.close()
            self._network = None
        if self._sandbox_runner is not None:
            self._sandbox_runner.close()
            self._sandbox_runner = None
        if self._sandbox_tmp is not None:
            shutil.rmtree(self._sandbox_tmp, ignore_errors=True)
            self._sandbox_tmp = None


def _on(value: bool) -> str:
    return "on" if value else "off"


def _policy_lines(policy: SandboxPolicy) -> list[str]:
    def show(paths: tuple[Path, ...]) -> str:
        return ", ".join(visible(str(p)) for p in paths) or "none"

    domains = ", ".join(visible(d) for d in policy.domains) or "none"
    network = "through the domain proxy" if policy.proxy_socket is not None else "none"
    return [
        f"Writable: {show(policy.writable)}",
        f"Read-only: {show((*policy.read_only, *policy.guarded))}",
        f"Hidden: {show(policy.hidden)}",
        f"Masked (fresh tmpfs): {show(policy.masked)}",
        f"Unix sockets allowed: {show(policy.unix_sockets)}",
        f"Network: {network}; allowed domains: {domains}",
    ]
