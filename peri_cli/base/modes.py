"""Permission mode names; a leaf module so the command line can list them without heavy imports."""

from typing import Literal

Mode = Literal["default", "accept-edits", "plan", "bypass"]
MODES: tuple[Mode, ...] = ("default", "accept-edits", "plan", "bypass")
