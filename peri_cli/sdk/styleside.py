"""The runtime's output styles and status line (Claude Code's; CONTRACT §12): the style a new
session freezes into its prompt, `/output-style`'s choice saved for the next one, `/clear`'s note
that the style waits for a new session, and the status line's command run for the TUI."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peri_cli import __version__
from peri_cli.base.textsafe import visible
from peri_cli.extensions.output_styles import (
    DEFAULT_NAME,
    StyleCatalog,
    StyleSource,
    choose_style,
    load_styles,
    save_output_style,
    style_sources,
)
from peri_cli.extensions.statusline import StatusInfo, StatusLineShown, run_status_line
from peri_cli.permissions.rulefile import RuleFileError
from peri_cli.sdk.plugins import folders

if TYPE_CHECKING:
    from peri_cli.base.settings import Settings
    from peri_cli.extensions.plugins.active import ActivePlugins
    from peri_cli.session.store import Session


KIND = "outputStyles"  # a plugin's part kind (`extensions/plugins/parts.py`)


class StyleSide:
    """Output styles and the status line, mixed into `composed.Runtime`."""

    if TYPE_CHECKING:
        workspace: Path
        env: Mapping[str, str]
        settings: Settings
        session: Session | None
        warnings: list[str]
        model: str
        plugins: ActivePlugins

        @property
        def context_window(self) -> int: ...

    def output_styles(self) -> StyleCatalog:
        """Every output style as the files say now: the project's, the user's, then each enabled
        plugin's `output-styles/` (listed as `plugin:<name>@<marketplace>`)."""
        home = Path(self.env.get("HOME", str(Path.home())))
        plugins = [StyleSource(d, f"plugin:{key}", d) for d, key in folders(self.plugins, KIND)]
        return load_styles([*style_sources(self.workspace, home), *plugins])

    def style_inputs(self) -> dict[str, Any]:
        """What a new session's snapshot takes of the style `outputStyle` names; the files
        skipped and an unknown name become warnings."""
        catalog = self.output_styles()
        self.warnings.extend(catalog.problems)
        style, warning = choose_style(catalog, self.settings.outputStyle)
        if warning is not None:
            self.warnings.append(warning)
        if style.is_default:
            return {}
        return {
            "style_name": style.name,
            "style_text": style.body,
            "style_keeps_coding": style.keep_coding,
        }

    @property
    def session_style(self) -> str:
        """The attached session's frozen style (its header), "Default" for none."""
        name = self.session.snapshot.output_style if self.session is not None else None
        return name or DEFAULT_NAME

    def set_output_style(self, name: str) -> tuple[bool, str]:
        """Save `name` as `outputStyle` for new sessions; (saved, one line saying what
        happened). The attached session keeps its frozen prompt."""
        catalog = self.output_styles()
        style = catalog.find(name)
        if style is None:
            names = ", ".join(s.name for s in catalog.styles)
            return False, visible(f"No output style {name!r}; choose one of {names}.")
        value = "default" if style.is_default else style.name
        try:
            path = save_output_style(self.workspace, value)
        except RuleFileError as e:
            return False, f"Output style not saved: {visible(str(e))}"
        self.settings = self.settings.model_copy(update={"outputStyle": value})
        now = self.session_style
        said = f"Output style {visible(style.name)} saved to {path}"
        if now.casefold() == style.name.casefold():
            return True, f"{said}; this session already uses it."
        return True, (
            f"{said}; it applies from the next new session (this one keeps "
            f"{visible(now)}: its prompt is frozen)."
        )

    def style_note(self) -> str | None:
        """After `/clear`: the style chosen since, which only a new session takes; None when
        the session already has the style the settings name."""
        pending, _ = choose_style(self.output_styles(), self.settings.outputStyle)
        now = self.session_style
        if pending.name.casefold() == now.casefold():
            return None
        return visible(
            f"The output style stays {now} in this session (its prompt is frozen); "
            f"{pending.name} applies from the next new session."
        )

    @property
    def status_line_command(self) -> str | None:
        """The `statusLine` command in force (a project's only once trusted), None for none."""
        command = self.settings.statusLine.command
        return command if command.strip() else None

    async def run_status_line(
        self, *, cost_usd: float | None, context_tokens: int | None, duration_ms: int
    ) -> StatusLineShown:
        """Run the status line's command for the attached session (as hooks run); nothing to
        show when there is no command or no session."""
        command, session = self.status_line_command, self.session
        if command is None or session is None:
            return StatusLineShown()
        info = StatusInfo(
            session_id=session.id,
            transcript_path=session.path,
            workspace=self.workspace,
            model=self.model,
            output_style=session.snapshot.output_style or "default",
            version=__version__,
            cost_usd=cost_usd,
            duration_ms=duration_ms,
            context_tokens=context_tokens,
            context_window=self.context_window,
        )
        return await run_status_line(
            command,
            info,
            cwd=self.workspace,
            env=dict(self.env),
            hidden_env=tuple(self.settings.scrub_env),
        )
