"""The assistant's core: Qt-free and torch-free.

Everything here is plain synchronous Python taking and returning dataclasses that
serialise to JSON. The GUI (app.gui) and the CLI (app.cli) are two presenters of it.
"""
