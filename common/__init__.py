"""Shared package of the benchmark scripts: I/O, configs, data fetching, statistics, suites.

Modules hold one concern each; scripts in ``scripts/`` stay thin and call into here.
"""
