"""Tests of common/blocks/ and the scripts of that suite."""
