"""Probes: small stdlib + torch scripts run by the TARGET environment's interpreter.

They are started as ``<env python> -I <file>`` and print JSON lines; they are the only
code in this project that imports torch.
"""
