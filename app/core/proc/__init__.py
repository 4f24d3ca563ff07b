"""The one subprocess runner (argument lists, a cleaned environment, process-tree cancel) and Windows'
job objects it uses.
"""
