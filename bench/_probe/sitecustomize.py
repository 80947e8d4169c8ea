"""Frame timing for bench/streaming.py, loaded only when that script puts this directory on
PYTHONPATH and sets PERI_BENCH_FRAMES: every Textual screen update (layout + compositor render +
terminal write, `Screen._on_timer_update`) is timed and appended to that file as
"<perf_counter at start> <seconds> <seconds of it in garbage collection> <generations>" lines
(line-buffered, so a killed process loses nothing). With PERI_BENCH_FRAME_PROFILE set too, the
frames run under cProfile, and the stats of those slower than PERI_BENCH_SLOW seconds (0:
all) are added up and written to that path after each of them.
"""

import os

_path = os.environ.get("PERI_BENCH_FRAMES")
if _path:
    import gc
    import time

    from textual.screen import Screen

    _out = open(_path, "a", buffering=1)  # noqa: SIM115
    _update = Screen._on_timer_update
    _profile_path = os.environ.get("PERI_BENCH_FRAME_PROFILE")
    _slow = float(os.environ.get("PERI_BENCH_SLOW", "0"))
    _stats = None
    _gc: list = []  # (generation, seconds) of each collection
    _gc_start = [0.0]

    def _on_gc(phase, info):  # type: ignore[no-untyped-def]
        if phase == "start":
            _gc_start[0] = time.perf_counter()
        else:
            _gc.append((info["generation"], time.perf_counter() - _gc_start[0]))
            del _gc[:-64]

    gc.callbacks.append(_on_gc)
    if _profile_path:
        import cProfile
        import pstats

    def _timed_update(self):  # type: ignore[no-untyped-def]
        global _stats
        start = time.perf_counter()
        _gc.clear()
        prof = cProfile.Profile() if _profile_path else None
        if prof is not None:
            prof.enable()
        try:
            return _update(self)
        finally:
            took = time.perf_counter() - start
            if prof is not None:
                prof.disable()
                if took >= _slow:
                    if _stats is None:
                        _stats = pstats.Stats(prof)
                    else:
                        _stats.add(prof)
                    _stats.dump_stats(_profile_path + ".tmp")  # (a kill mid-write: the last)
                    os.replace(_profile_path + ".tmp", _profile_path)
            collected = sum(s for _, s in _gc)
            gens = ",".join(str(g) for g, _ in _gc) or "-"
            _out.write(f"{start:.6f} {took:.6f} {collected:.6f} {gens}\n")

    Screen._on_timer_update = _timed_update  # type: ignore[method-assign]
