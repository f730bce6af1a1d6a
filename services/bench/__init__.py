"""`engram bench`: benchmark sections that print figures and write them to bench/results/.

Timings are measured here and only here; tests never assert on them.
"""
