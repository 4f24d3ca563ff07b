"""The base floor: words (texts and their codes), errors, events, paths, names and small facts that
every other floor uses; it imports nothing from them.
"""
