"""Reading a file a person gives skilltest: a regular file, bounded in size, UTF-8, and JSON
bounded in depth.

Suites, model scripts, plugin manifests, results files, traces and cassettes all come from
outside. Each is read through these functions, so that each refuses the same things the same
way, before reading a byte too many: a missing file, a folder, a FIFO or a device (which would
block or never end), a file larger than its bound, bytes that are not UTF-8 (named at their
line), JSON nested deeper than any file skilltest writes. Every error names the file and the
fix.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from skilltest.errors import InputError
from skilltest.limits import MAX_JSON_DEPTH

_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


def open_regular(
    path: Path,
    *,
    error: type[InputError] = InputError,
    what: str = "the file",
    missing: str = "file not found",
    missing_fix: str = "check the path",
) -> BinaryIO:
    """``path`` opened for reading in binary, when it is a regular file.

    The file is opened without blocking and checked once open, so a FIFO (whose opening would
    wait for a writer) or a device (which never ends) is refused before a byte is read, and no
    file swapped in between a check and the opening slips through.

    Raises:
        InputError: (of class ``error``) missing, not a regular file, or unreadable.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise error(missing, location=str(path), fix=missing_fix) from None
    except OSError as exc:
        kind = kind_of(path)
        raise error(
            f"cannot read {what}: "
            + (f"it is {kind}, not a regular file" if kind else f"{exc.strerror or exc}"),
            location=str(path),
            fix="pass a regular file" if kind else "pass a readable file, or fix its permissions",
        ) from exc
    mode = os.fstat(fd).st_mode
    for test, kind in _KINDS:
        if test(mode):
            os.close(fd)
            raise error(
                f"cannot read {what}: it is {kind}, not a regular file",
                location=str(path),
                fix="pass a regular file",
            )
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def kind_of(path: Path) -> str | None:
    """What ``path`` is when it is not a regular file (a socket cannot even be opened), following
    a symbolic link; ``None`` for a regular file or a path that does not exist."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return next((kind for test, kind in _KINDS if test(mode)), None)


def read_head(path: Path, limit: int, *, what: str = "the file") -> bytes:
    """At most the first ``limit`` bytes of a regular file (a transcript shown in a report).

    Raises:
        InputError: missing, not a regular file, or unreadable.
    """
    with open_regular(path, what=what) as handle:
        try:
            return handle.read(limit)
        except OSError as exc:
            raise InputError(
                f"cannot read {what}: {exc.strerror or exc}", location=str(path)
            ) from exc


def read_bytes(
    path: Path,
    *,
    limit: int,
    error: type[InputError] = InputError,
    what: str = "the file",
    too_large: str = "skilltest reads",
    large_fix: str = "check that this is the right file",
    missing: str = "file not found",
    missing_fix: str = "check the path",
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Args:
        path: The file.
        limit: The most bytes it may hold.
        error: The class of error raised (``SuiteError`` for a suite ...).
        what: What the file is, for messages (``the cassette``).
        too_large: Ends "more than the N MiB ..." (``a suite or model script may be``).
        large_fix: The fix for a file over the bound.
        missing: The message for a file that does not exist.
        missing_fix: The fix for a file that does not exist.

    Raises:
        InputError: (of class ``error``) missing, not a regular file, unreadable, or larger
            than ``limit``; nothing is read from a FIFO or a device.
    """
    with open_regular(
        path, error=error, what=what, missing=missing, missing_fix=missing_fix
    ) as handle:
        try:
            size = os.fstat(handle.fileno()).st_size
            raw = b"" if size > limit else handle.read(limit + 1)
        except OSError as exc:
            raise error(
                f"cannot read {what}: {exc.strerror or exc}",
                location=str(path),
                fix="pass a readable file, or fix its permissions",
            ) from exc
    size = max(size, len(raw))
    if size > limit:
        raise error(
            f"{what} is {_mib(size)}, more than the {limit / 2**20:g} MiB {too_large}",
            location=str(path),
            fix=large_fix,
        )
    return raw


def decode(
    raw: bytes,
    path: Path,
    *,
    error: type[InputError] = InputError,
    fix: str = "save the file as UTF-8",
    bom: bool = False,
    column: bool = False,
) -> str:
    """``raw`` as UTF-8 text (a leading byte-order mark dropped with ``bom``).

    Raises:
        InputError: (of class ``error``) at ``file:line`` (and ``:column`` with ``column``)
            of the first byte that is not UTF-8.
    """
    try:
        return raw.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        where = f"{path}:{line}"
        if column:
            line_start = raw.rfind(b"\n", 0, exc.start) + 1
            where += f":{exc.start - line_start + 1}"
        raise error(
            f"not UTF-8: byte 0x{raw[exc.start]:02x} cannot be decoded",
            location=where,
            fix=fix,
        ) from None


def parse_json(
    text: str,
    path: Path,
    *,
    error: type[InputError] = InputError,
    what: str = "the file",
    fix: str = "check commas, quotes and brackets; `python -m json.tool FILE` points at the "
    "same place",
    pairs: Callable[[list[tuple[str, Any]]], Any] | None = None,
    depth: int = MAX_JSON_DEPTH,
) -> Any:
    """The JSON value of ``text``, nested at most ``depth`` levels.

    Raises:
        InputError: (of class ``error``) not JSON (at ``file:line:column``), or nested deeper
            than ``depth``.
    """
    try:
        value = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise error(
            f"{what} is not valid JSON: {exc.msg}",
            location=f"{path}:{exc.lineno}:{exc.colno}",
            fix=fix,
        ) from None
    except ValueError:  # an integer past Python's int-string conversion limit
        raise error(
            f"{what} holds a number of more than {sys.get_int_max_str_digits()} digits",
            location=_long_number(text, path),
            fix="give a file skilltest wrote; no figure it writes has that many digits",
        ) from None
    except RecursionError:
        value = None
        deepest = depth + 1
    else:
        deepest = nesting(value, depth)
    if deepest > depth:
        raise error(
            f"{what} is nested deeper than {depth} levels",
            location=str(path),
            fix="give a file skilltest wrote; none nests that deep",
        )
    return value


def _long_number(text: str, path: Path) -> str:
    """``file:line:column`` of the first number with more digits than Python converts."""
    found = re.search(rf"\d{{{sys.get_int_max_str_digits() + 1},}}", text)
    if found is None:
        return str(path)
    line = text.count("\n", 0, found.start()) + 1
    return f"{path}:{line}:{found.start() - (text.rfind(chr(10), 0, found.start()) + 1) + 1}"


def nesting(value: Any, limit: int) -> int:
    """How deep ``value`` nests (a scalar is 0), counted up to ``limit + 1`` at most."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            level += 1
            deepest = max(deepest, level)
            if level > limit:
                return level
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level) for child in children)
    return deepest


def read_json(
    path: Path,
    *,
    limit: int,
    error: type[InputError] = InputError,
    what: str = "the file",
    fix: str = "check commas, quotes and brackets; `python -m json.tool FILE` points at the "
    "same place",
    depth: int = MAX_JSON_DEPTH,
    missing: str = "file not found",
) -> Any:
    """The JSON value of a regular, UTF-8 file of at most ``limit`` bytes and ``depth`` levels.

    Raises:
        InputError: (of class ``error``) as :func:`read_bytes`, :func:`decode` and
            :func:`parse_json`.
    """
    raw = read_bytes(
        path, limit=limit, error=error, what=what, large_fix=fix, missing=missing, missing_fix=fix
    )
    return parse_json(
        decode(raw, path, error=error), path, error=error, what=what, fix=fix, depth=depth
    )
