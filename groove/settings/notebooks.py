"""groove notebook run / open."""

from __future__ import annotations

from groove.settings import shared
from groove.settings.setting import Setting, table

# ---------------------------------------------------------------- groove notebook run / open
# (NAME is an argument, and -p NAME VALUE, the notebook's own parameters, is written in
# groove/cli/notebook_cmd.py: the parameters themselves are EVAL's and TUNE's)

NOTEBOOK_RUN = table(
    shared.KB_PATH,
    Setting(
        "out_dir",
        "folder",
        "Folder for <name>.ipynb (executed), <name>.html and result.json.",
        flag="--out",
        dest="out_dir",
        required=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "notebook",
        "file",
        "Run this notebook file instead of a bundled one.",
        flag="--notebook",
        dest="notebook_path",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "cell_timeout",
        "count",
        "Fail the run (exit 3) when one cell runs longer than this; 0: no limit (default 1800).",
        flag="--cell-timeout",
        metavar="SECONDS",
        default=1800,  # half an hour: far above a real eval, short of a CI job's own limit
        surfaces=frozenset({"cli"}),
    ),
    shared.CONFIG,  # handed to the notebook, which loads it
)

NOTEBOOK_OPEN = table(
    shared.KB_PATH,
    Setting(
        "folder",
        "folder",
        "Working folder for the copy (default: ./groove-notebooks).",
        flag="--dir",
        dest="folder",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "overwrite",
        "bool",
        "Replace an earlier copy in the folder.",
        flag="--overwrite",
        switch=True,
        default=False,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "browser",
        "bool",
        "Start JupyterLab without opening a browser.",
        flag="--no-browser",
        switch=True,
        default=True,
        surfaces=frozenset({"cli"}),
    ),
    shared.PORT,
    Setting(
        "start",
        "bool",
        "Write the copy and print the command; do not start.",
        flag="--no-start",
        switch=True,
        default=True,
        surfaces=frozenset({"cli"}),
    ),
    shared.CONFIG,  # handed to the copy, which loads it
)
