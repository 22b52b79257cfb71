"""medvqa's core. Importing it first checks that `medvqa` is this installation's package: a folder
named `medvqa` in the working directory (a clone of the repository, say) is found before an
editable install and imported as an empty namespace package, and every plugin would then fail
with "cannot import name 'hookimpl' from 'medvqa'", blaming the plugin."""

import sys as _sys
from pathlib import Path as _Path


def _check_not_shadowed() -> None:
    top = _sys.modules.get("medvqa")
    if top is None or "_EXPORTS" in vars(top):  # medvqa/__init__.py's table of public names
        return
    where = ", ".join(str(p) for p in getattr(top, "__path__", ())) or getattr(top, "__file__", None) or "?"
    what = "which has no __init__.py" if getattr(top, "__file__", None) is None else "another package"
    raise ImportError(
        f"the folder {where} shadows the installed medvqa package (its core is {_Path(__file__).parent}): "
        f"Python imports that folder ({what}) as 'medvqa' because it comes first on sys.path (the working "
        f"directory); run from another directory or rename the folder"
    )


_check_not_shadowed()
