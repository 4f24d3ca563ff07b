"""The PySide6 wizard: a thin presenter over app.core. Never imports torch."""
