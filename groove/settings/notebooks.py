"""groove notebook run / open."""

from __future__ import annotations

from groove.settings import shared
from groove.settings.setting import CLI_ONLY, Setting, switch, table

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
        surfaces=CLI_ONLY,
    ),
    Setting(
        "notebook",
        "file",
        "Run this notebook file instead of a bundled one.",
        flag="--notebook",
        dest="notebook_path",
        surfaces=CLI_ONLY,
    ),
    Setting(
        "cell_timeout",
        "count",
        "Fail the run (exit 3) when one cell runs longer than this; 0: no limit (default 1800).",
        flag="--cell-timeout",
        metavar="SECONDS",
        default=1800,  # half an hour: far above a real eval, short of a CI job's own limit
        surfaces=CLI_ONLY,
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
        surfaces=CLI_ONLY,
    ),
    switch("overwrite", "--overwrite", "Replace an earlier copy in the folder.", surfaces=CLI_ONLY),
    switch(
        "browser", "--no-browser", "Start JupyterLab without opening a browser.", surfaces=CLI_ONLY
    ),
    shared.PORT,
    switch(
        "start",
        "--no-start",
        "Write the copy and print the command; do not start.",
        surfaces=CLI_ONLY,
    ),
    shared.CONFIG,  # handed to the copy, which loads it
)
