"""Credentials in URLs removed before a string is shown: a base URL may carry `user:password@`.

`redact_url` works on any text (an error message, a proxy's error page) and on every URL in it,
so it can run over whatever a provider reports without knowing where the URL sits.
"""

from __future__ import annotations

import re
import urllib.parse

MASK = "***"

# scheme://userinfo@ — userinfo runs to the last "@" before the host ends ("/", "?", "#",
# whitespace or a quote), so an unencoded "@" in a password is covered too. The scheme's length
# is bounded and no repetition holds an "@", so a scan stays linear on hostile input.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]{0,31}://)(?:[^\s/?#@\"'<>`\\]*@)+")


def redact_url(text: str) -> str:
    """`text` with the userinfo of every URL in it replaced by `***`."""
    if "@" not in text:
        return text  # the common case costs one scan
    return _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)


def url_secrets(url: str | None) -> list[str]:
    """The password a URL carries (or its user name when that is all: then it is a token), as
    written and percent-decoded, so a server echoing it bare can be scrubbed too."""
    if not url or "@" not in url:
        return []
    # Leniently: everything up to the URL's last "@" (a password with an unencoded "/" is still
    # the password the user meant, and the one an error about the invalid URL would print).
    userinfo = url.strip().partition("://")[2].rpartition("@")[0]
    user, _, password = userinfo.partition(":")
    secret = password or user
    return list(dict.fromkeys(s for s in (secret, urllib.parse.unquote(secret)) if s))
