"""Tests of common/worldsense/ and the scripts of that suite."""
