"""Torch Setup Assistant: detect, recommend, install, verify and measure PyTorch."""

__version__ = "0.1.0"
