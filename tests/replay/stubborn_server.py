"""A stdio server that will not stop by itself: it ignores SIGTERM and stdin closing, and starts
a child of its own. It writes "<its pid> <its child's pid>" to the file named by argv[1]."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "300"])
Path(sys.argv[1]).write_text(f"{os.getpid()} {child.pid}")
while True:
    time.sleep(1)
