"""Typed exceptions for problems the user can fix (bad file, bad config, bad argument).

Library code raises these; ``common.cli.run_main`` turns them into a one-line message on
stderr and exit code 2, so a user mistake never ends in a traceback.
"""


class UserError(Exception):
    """Base class: something in the user's input, files or environment must be fixed."""


class ConfigError(UserError):
    """A YAML config is unreadable or has a wrong, missing or unknown field."""


class DataError(UserError):
    """An input data file is missing, malformed or inconsistent."""


class FetchError(UserError):
    """An external data file could not be fetched or failed its pinned hash."""


class OfflineError(FetchError):
    """The data host could not be reached at all (no network, no DNS, connection refused)."""

    def __init__(self, message: str, host: str = ""):
        super().__init__(message)
        self.host = host  # e.g. raw.githubusercontent.com
