"""One module per CLI sub-command; each defines ``register(subparsers)``."""
