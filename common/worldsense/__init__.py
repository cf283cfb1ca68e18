"""The WorldSense suite: the official test set's format, loading, and (in ``analysis``) scoring.

Names follow the release's ``worldsense.benchmark`` module so its users feel at home.
"""

from common.worldsense.data import load_testset, load_trainset

__all__ = ["load_testset", "load_trainset"]
