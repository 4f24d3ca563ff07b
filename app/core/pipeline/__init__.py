"""The one pipeline (the session: detect, recommend, plan, install, verify, bench, report), its report
and the answer file that drives it.
"""
