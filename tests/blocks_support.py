"""Helpers shared by the blocks-world tests: the release directory and small problem builders."""

import pytest

from common.blocks.problems import Problem, load_problems
from common.blocks.release import RELEASE, problems_dir


@pytest.fixture(scope="session")
def release():
    """The CogSci 2022 release directory; fails (not skips) when it was not fetched."""
    if not (RELEASE / ".fetched").is_file():
        pytest.fail("data/cogsci22_blocks is missing: run `make data` (DATA_MIRROR=../shared offline)")
    return RELEASE


@pytest.fixture(scope="session")
def released_problems(release):
    """The 103 released problems by id."""
    return {p.id: p for p in load_problems(problems_dir(release))}


def make_problem(init, goal_relations, pid="900", view="v"):
    """Return a one-view Problem with ``init`` as both boards' items (goal board = init)."""
    items = sorted(i for s in init for i in s)
    return Problem(pid, [list(s) for s in init], [list(s) for s in init], {view: goal_relations},
                   {item: f"odd {item}" for item in items}, view_specs={view: {"rename": "none"}})
