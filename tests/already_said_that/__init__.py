"""Tests of common/already_said_that/ and the scripts of that suite."""
