"""`python -m tpucheck`.

`python -m` puts the current directory first on `sys.path`. Run from inside the repository
being scanned, that repository's top-level `yaml.py`, `typer.py` or `json.py` would then be
imported, that is executed, in place of the real module the CLI needs. The package itself
is already imported when this runs, so the current directory moves to the end of the path:
everything installed wins, and a source checkout run from its own root still works.
"""

import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()) and not getattr(sys.flags, "safe_path", False):
    sys.path.append(sys.path.pop(0))

from tpucheck.cli import main  # after the path fix, by design

main()
