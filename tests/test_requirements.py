"""requirements.lock pins exactly what requirements.txt allows, so `make env` is reproducible."""

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from common.paths import ROOT


def requirements(name: str) -> list[Requirement]:
    lines = (ROOT / name).read_text().splitlines()
    return [Requirement(line.split("#")[0]) for line in lines if line.split("#")[0].strip()]


def test_every_requirement_is_pinned_in_the_lock_within_its_bounds():
    locked = {canonicalize_name(req.name): req for req in requirements("requirements.lock")}
    for req in locked.values():
        assert len(req.specifier) == 1 and next(iter(req.specifier)).operator == "==", req
    for req in requirements("requirements.txt"):
        pin = locked.get(canonicalize_name(req.name))
        assert pin is not None, f"{req.name} is missing from requirements.lock: run `make lock`"
        version = next(iter(pin.specifier)).version
        assert req.specifier.contains(version), f"{pin} is outside {req}: run `make lock`"


def test_the_optional_extras_pin_their_own_packages_exactly():
    """The engine, models, browser, bench and explore extras are installed under requirements.lock (-c)
    with their own packages pinned, so `make test-engine` or `make bench-blocks` in a year builds the
    same thing."""
    extras = ("engine", "models", "browser", "bench", "explore")
    for name in (f"requirements-{extra}.txt" for extra in extras):
        for req in requirements(name):
            assert [spec.operator for spec in req.specifier] == ["=="], f"{name}: {req} is not pinned"
