"""The canvas suite: questions about shapes on a 2-D canvas (see README.md)."""
