# PyInstaller run-time hook (build.spec, runtime_hooks): it runs before PyInstaller's own PySide6
# hook, which imports PySide6.QtCore. Importing app.gui first loads PySide6 with its support code
# from the cache build.spec bundled (app/gui/pyside_support.py), instead of compiling that code
# at every start.
import app.gui  # noqa: F401
