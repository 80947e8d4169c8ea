"""Modal screens: the session picker and the /context view."""
