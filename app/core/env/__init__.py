"""Environments: their backends (venv, uv, conda) and layout, the packages in them, the torch guard and
the registry of the environments this app made.
"""
