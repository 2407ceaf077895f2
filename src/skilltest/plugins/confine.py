"""Runs a command that may write only inside one folder: how a plugin's hooks are confined to
their run's sandbox.

Claude Code runs a plugin's hooks itself, outside the sandbox of its Bash tool. skilltest rewrites
each command hook of the run's copy of a plugin (:func:`skilltest.plugins.hooks.confine_hooks`)
to start through this file, run as a script (``python -I confine.py FOLDER -- COMMAND...``, so
that nothing of skilltest is imported): on Linux with Landlock (5.13 and later) the command and
everything it starts can then create, write, rename or remove files only under ``FOLDER`` (and
write to the devices of ``/dev``, such as ``/dev/null``); reading is not restricted. Where
Landlock is missing the command runs as it is, confined only by the run's environment (its own
``HOME``, ``TMPDIR`` and ``XDG_*`` folders, and the workspace as working directory).

Standard library only, and no import of skilltest: it is started once per hook.
"""

from __future__ import annotations

import ctypes
import os
import sys

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
"""Landlock's system calls (the same numbers on every architecture)."""
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_WRITE_FILE = 1 << 1
_REMOVE_DIR, _REMOVE_FILE = 1 << 4, 1 << 5
_MAKE = sum(1 << bit for bit in range(6, 13))
"""MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM."""
_REFER = 1 << 13
"""ABI 2: moving a file between folders."""
_TRUNCATE = 1 << 14
"""ABI 3."""


def _writes(abi: int) -> int:
    """Every right that changes the file system, as far as this kernel's Landlock knows them."""
    rights = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    return rights


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def confine(folder: str) -> bool:
    """Restricts this process (and what it starts) to writing under ``folder`` and ``/dev``.

    Returns whether the restriction is in force (``False`` without Landlock).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    abi = syscall(
        _CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    if abi < 1:
        return False
    handled = _writes(abi)
    attr = ctypes.c_uint64(handled)
    ruleset = syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    try:
        for path, rights in (
            (folder, handled),
            ("/dev", _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)),
        ):
            fd = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                rule = _PathBeneath(rights, fd)
                if syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
                    return False
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) == 0
    finally:
        os.close(ruleset)


def main(argv: list[str]) -> int:
    """``confine.py FOLDER -- COMMAND...``: confines itself, then becomes the command."""
    if len(argv) < 3 or argv[1] != "--":
        print("usage: confine.py FOLDER -- COMMAND...", file=sys.stderr)
        return 2
    folder, command = argv[0], argv[2:]
    confine(folder)
    os.execvp(command[0], command)
    return 127  # not reached: exec replaces this process or raises


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
