"""Writing a file whole or not at all: the one writer of every part (translated files, reports and their JSON,
the docs, recorded runs, the suite's JSON, paired examples). A leaf: it imports nothing of recompat, so the
translator, the harness and the reports all use it without an import cycle."""
from __future__ import annotations

import os
import signal
import stat
import tempfile
import threading


def default_mode() -> int:
    """The permission bits open() gives a new file: 0o666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: str | os.PathLike, data: bytes | str, mode: int | None = None) -> None:
    """Write ``data`` (a str as UTF-8) to ``path`` so that a reader sees the old file or the new one, never a part.

    The data goes to a temporary file in the same folder (so the rename stays on one file system), is flushed to
    disk (fsync), given its permission bits and renamed over ``path``. On any error, an interrupt included, the
    temporary file is removed and ``path`` is as it was. ``mode``: the permission bits to give the file; default:
    those of the file it replaces, or :func:`default_mode` for a new one. The folder must exist. OSError
    propagates: each caller says what went wrong in its own terms."""
    if isinstance(data, str):
        data = data.encode("utf-8")

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    write_atomic_with(path, write, mode)


def write_atomic_with(path: str | os.PathLike, write, mode: int | None = None, suffix: str = "") -> None:
    """As :func:`write_atomic`, for a writer that takes a path (``mindspore.save_checkpoint``, ``torch.save``):
    ``write(tmp)`` writes the whole file at ``tmp``, a name in the same folder ending in ``.tmp`` + ``suffix``
    (mindspore.save_checkpoint adds ``.ckpt`` to a name without it); it is then flushed to disk and renamed over
    ``path``, or removed on any error."""
    path = os.fspath(path)
    if mode is None:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            mode = default_mode()
    # A Ctrl-C (or a SIGTERM, which the command turns into one) after mkstemp made the file but before the try
    # below could remove it would leave it behind: both are held off until then, and a pending one is raised inside
    # the try.
    held = _hold_sigint()
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=f".{os.path.basename(path)}.",
                                   suffix=".tmp" + suffix)
    except BaseException:
        _release_sigint(held)
        raise
    try:
        os.close(fd)
        _release_sigint(held)
        held = None
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _release_sigint(held)   # after the unlink: a Ctrl-C still held is raised here, with nothing left behind
        raise


def _hold_sigint():
    """Block SIGINT and SIGTERM in this thread (the main one: where Python raises KeyboardInterrupt); the old mask,
    or None."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def _release_sigint(held) -> None:
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
