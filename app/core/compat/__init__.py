"""The compatibility data (releases, drivers, hardware), its CUDA rules, its freshness check and its
signed refresh.
"""
