"""Frame timing for bench/streaming.py, loaded only when that script puts this directory on
PYTHONPATH and sets PERI_BENCH_FRAMES: every Textual screen update (layout + compositor render +
terminal write, `Screen._on_timer_update`) is timed and appended to that file as
"<perf_counter at start> <seconds>" lines (line-buffered, so a killed process loses nothing).
"""

import os

_path = os.environ.get("PERI_BENCH_FRAMES")
if _path:
    import time

    from textual.screen import Screen

    _out = open(_path, "a", buffering=1)  # noqa: SIM115
    _update = Screen._on_timer_update

    def _timed_update(self):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return _update(self)
        finally:
            _out.write(f"{start:.6f} {time.perf_counter() - start:.6f}\n")

    Screen._on_timer_update = _timed_update  # type: ignore[method-assign]
