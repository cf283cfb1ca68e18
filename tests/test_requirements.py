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
