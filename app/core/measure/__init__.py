"""Measuring an environment: the probes run inside it (verify, the speed test), the machine's load
while they run and the peak it can reach.
"""
