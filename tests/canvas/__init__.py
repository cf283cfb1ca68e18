"""Tests of common/canvas/ and the scripts of that suite."""
