"""Fixtures shared across rooms."""

import signal

pytest_plugins = ["tests.sandbox.pages"]  # page_port: a page on the host's loopback

# A shell starts a background job (`pytest ... &`, a CI runner's script) with SIGINT ignored, and
# an ignored signal stays ignored across exec: every `peri` these tests start and then send SIGINT
# would ignore it too, and the Ctrl+C tests would wait out their timeouts. A Python handler here
# resets to the default in each child at exec, so the children get the disposition a terminal gives.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
