"""Transitivity: lines of shapes told as links between neighbours, in a random order, then a
question about two shapes on one line that are not neighbours.

The layout is a frame: two rows (each shape right of the previous one by the relation rule) and
two columns (each above the previous one) that cross at four corner shapes, with at least one
shape between two corners on a line, and four outer shapes beyond the corners, each ending one
row and one column (the upper-left one is left of the bottom-left corner and above the top-left
one, ...), so that every corner has a neighbour on each of its four sides: no corner can be told
from another by the directions of its own links. Shapes off the frame close the description. It
states each pair of neighbours on a line once, in one of four forms drawn at random ("Left of the
X is a Y.", "Right of the Y is a X.", "The X is left of a Y.", "The Y is right of a X.", the same
fact), the sentences in a random order, then the shapes off the frame ("There is also a ... in
the canvas."). No sentence relates two corners: each answer needs linking two sentences at least.

Every item is asked as a 2 x 2 contrast tuple over the subject and the reference: the subjects
are two opposite corners, the references the other two, and each subject shares one line with
each reference (bottom-left against bottom-right on the bottom row, against top-left on the left
column, ...). The four questions answer Left, Right, Above and Below once each. A rule that does
not read the reference answers a subject's two questions alike, which have answers on different
axes; a rule that does not read the subject answers a reference's two questions alike: each gets
at most two of the four right, whatever it reads of the lines (where a line ends, which shape is
in the middle, which sentence comes last). The item is the member answering the stratum's
direction; which diagonal asks, the lines' lengths and the sentence order are drawn without
regard to it. The pair's line fixes the axis, so chance is 1/2; with the reference (or the
subject) unread even the axis is unknown.

The frame needs 12 shapes: the task does not run on fewer.
"""

import itertools
import math
import random

from common.canvas import describe
from common.canvas.relations import horizontal, vertical
from common.canvas.shapes import Geometry, Shape, bounding_box, circumradius, fits, margin
from common.canvas.tasks.base import Impossible, Member, Questions, Task

OPPOSITE = describe.OPPOSITE
ANSWERS = ["Left", "Right", "Above", "Below"]
FRAME = 12  # four corners, four outer shapes and one shape between each two corners on a line
CORNERS = ("bl", "br", "tl", "tr")  # bottom-left, bottom-right, top-left, top-right
OUTER = ("ul", "ur", "ll", "lr")  # outside the frame: upper-left, upper-right, lower-left, lower-right
LINES = {  # each line: (its first outer shape, its corners, its last outer shape) going up its axis
    "bottom": ("ul", ("bl", "br"), "ur"),  # left of bl: ul; right of br: ur
    "top": ("ll", ("tl", "tr"), "lr"),
    "left": ("ll", ("bl", "tl"), "ul"),  # below bl: ll; above tl: ul
    "right": ("lr", ("br", "tr"), "ur"),
}


def _gap(a: Shape, b: Shape, axis: int, geometry: Geometry) -> int:
    """Return the smallest integer distance on ``axis`` at which ``b`` follows ``a`` on a line: beyond
    the relation margin, and apart (circumscribed circles) at the same height or x."""
    return (
        math.floor(max(margin(a, b, axis, geometry), circumradius(a, geometry) + circumradius(b, geometry)))
        + 1
    )


def _spread(rng: random.Random, start: int, total: int, gaps: list[int]) -> list[int] | None:
    """Return positions from ``start`` along a line whose consecutive differences are at least
    ``gaps`` and add up to ``total`` (the spare length cut at random), or None when they do not fit."""
    slack = total - sum(gaps)
    if slack < 0:
        return None
    if not gaps:
        return [start]
    cuts = sorted(rng.randint(0, slack) for _ in range(len(gaps) - 1))
    extra = [b - a for a, b in zip([0, *cuts], [*cuts, slack], strict=True)]
    out = [start]
    for gap, more in zip(gaps, extra, strict=True):
        out.append(out[-1] + gap + more)
    return out


class TransitivityTask(Task):
    """Where is one shape of a line relative to another, not its neighbour? A 2 x 2 tuple over the
    subject and the reference, on a frame of two rows and two columns."""

    name = "transitivity"
    owned_description = "chain"
    instruction = "Answer with one of Left, Right, Above, Below."
    min_shapes = FRAME
    inputs = ("subject", "reference")

    def answer_strata(self, num_shapes: int) -> list[str]:
        """Return the four directions."""
        return list(ANSWERS)

    def unsupported(self, num_shapes: int, stratum: str | None = None) -> str | None:
        """Return why a canvas this small cannot be asked (see the module docstring)."""
        if num_shapes < self.min_shapes:
            return (
                f"transitivity needs at least {self.min_shapes} shapes (two rows and two columns crossing at "
                "four corners, a shape between each two corners, and four outside the frame so that every "
                "corner has a neighbour on every side)"
            )
        return None

    def place(
        self, rng: random.Random, identities: list[tuple[str, str, str]], geometry: Geometry
    ) -> list[Shape]:
        """Return the shapes of a frame: the corners first (bottom-left, bottom-right, top-left,
        top-right), the outer shapes (upper-left, upper-right, lower-left, lower-right), then the
        shapes between the corners, then those off the frame (never at a row's height or a
        column's x, so ``frame_roles`` tells them apart). Raises Impossible when the drawn lines do
        not fit the canvas or two shapes would touch."""
        roles = self.layout(rng, len(identities))
        shapes = {role: Shape(*identity, 0, 0) for role, identity in zip(roles, identities, strict=True)}
        lines = self._lines(roles)
        xs = self._axis(rng, [lines["bottom"], lines["top"]], shapes, 0, geometry)
        ys = self._axis(rng, [lines["left"], lines["right"]], shapes, 1, geometry)
        if xs is None or ys is None:
            raise Impossible("the lines do not fit in the canvas")
        levels = {"bottom": ys["bl"], "top": ys["tl"], "left": xs["bl"], "right": xs["br"]}
        placed: dict[str, Shape] = {}
        for name, line in lines.items():
            for role in line:
                if role in CORNERS or role in OUTER:
                    placed[role] = Shape(*shapes[role].identity, xs[role], ys[role])
                elif name in ("bottom", "top"):
                    placed[role] = Shape(*shapes[role].identity, xs[role], levels[name])
                else:
                    placed[role] = Shape(*shapes[role].identity, levels[name], ys[role])
        order = [*CORNERS, *OUTER, *(r for r in roles if r in placed and r not in CORNERS and r not in OUTER)]
        out = [placed[role] for role in order]
        for i, shape in enumerate(out):
            if not fits(shape, out[:i], geometry):
                raise Impossible("two shapes of the frame touch or are unrelated")
        taken_x, taken_y = {xs["bl"], xs["br"]}, {ys["bl"], ys["tl"]}
        for role in roles:
            if not role.startswith("off:"):
                continue
            for _ in range(geometry.place_attempts):
                x, y = rng.randint(-geometry.half, geometry.half), rng.randint(-geometry.half, geometry.half)
                candidate = Shape(*shapes[role].identity, x, y)
                if x not in taken_x and y not in taken_y and fits(candidate, out, geometry):
                    out.append(candidate)
                    break
            else:
                raise Impossible("no room off the frame")
        return out

    @staticmethod
    def layout(rng: random.Random, n: int) -> list[str]:
        """Return the role of each of ``n`` shapes: the four corners, the four outer shapes, one
        shape between each two corners, and each other shape between two corners
        (``"<line>:between:<k>"``) or off the frame (``"off:<k>"``), drawn at random."""
        roles = [*CORNERS, *OUTER, *(f"{line}:between:0" for line in LINES)]
        for k in range(n - FRAME):
            roles.append(rng.choice([*(f"{line}:between:{k + 1}" for line in LINES), f"off:{k + 1}"]))
        return roles[:n]

    @staticmethod
    def _lines(roles: list[str]) -> dict[str, list[str]]:
        """Return each line's roles in order going up its axis: its first outer shape, its first
        corner, the shapes between, its second corner, its last outer shape."""
        out = {}
        for name, (first, (low, high), last) in LINES.items():
            between = [r for r in roles if r.startswith(f"{name}:between:")]
            out[name] = [first, low, *between, high, last]
        return out

    @staticmethod
    def _axis(
        rng: random.Random, lines: list[list[str]], shapes: dict[str, Shape], axis: int, geometry: Geometry
    ) -> dict[str, int] | None:
        """Return the positions on ``axis`` of the shapes of two parallel lines whose corners share
        two coordinates (the first corners at one, the second at the other), the spare room spread
        at random; None when they do not fit inside the border."""
        half = geometry.half
        plan = []
        for line in lines:
            i, j = (
                k for k, role in enumerate(line) if role in CORNERS
            )  # the outer shapes: beyond  # the outer shapes: beyond
            gaps = [_gap(shapes[a], shapes[b], axis, geometry) for a, b in itertools.pairwise(line)]
            low_box = bounding_box(shapes[line[0]], geometry)
            high_box = bounding_box(shapes[line[-1]], geometry)
            below = sum(gaps[:i]) - low_box[axis]  # how far the line reaches below its first corner
            above = sum(gaps[j:]) + high_box[axis + 2]
            plan.append((line, i, j, gaps, below, above))
        inner = max(sum(gaps[i:j]) for _, i, j, gaps, _, _ in plan)
        lo = -half + math.floor(max(p[4] for p in plan)) + 1
        hi = half - math.floor(max(p[5] for p in plan)) - 1
        if hi - lo < inner:
            return None
        first = rng.randint(lo, hi - inner)
        second = rng.randint(first + inner, hi)
        out: dict[str, int] = {}
        for line, i, j, gaps, _, _ in plan:
            low_room = first - (-half - bounding_box(shapes[line[0]], geometry)[axis]) - 1
            high_room = half - bounding_box(shapes[line[-1]], geometry)[axis + 2] - 1 - second
            low = _spread(
                rng, 0, rng.randint(sum(gaps[:i]), max(sum(gaps[:i]), math.floor(low_room))), gaps[:i][::-1]
            )
            middle = _spread(rng, first, second - first, gaps[i:j])
            high = _spread(
                rng, second, rng.randint(sum(gaps[j:]), max(sum(gaps[j:]), math.floor(high_room))), gaps[j:]
            )
            if low is None or middle is None or high is None:
                return None
            positions = [first - d for d in low[::-1]][:-1] + middle + high[1:]
            for role, position in zip(line, positions, strict=True):
                out[role] = position
        return out

    def generate_questions(
        self,
        shapes: list[Shape],
        rng: random.Random,
        geometry: Geometry,
        selected: str | None = None,
        examples: int = 2,
        twins: bool = True,
    ) -> Questions:
        """Return the frame's description, the 2 x 2 tuple (the member answering ``selected`` first)
        and same-canvas examples (never two corners, nor a corner and a shape between corners).
        Raises Impossible when the shapes are not a frame by the relation rule."""
        roles = self.frame_roles(shapes, geometry)
        answer = self.pick_stratum(rng, len(shapes), selected)
        lines = {
            name: [shape for key, shape in roles.items() if key.startswith(f"line:{name}:")] for name in LINES
        }
        subjects, references = (
            (("bl", "tr"), ("br", "tl")) if rng.random() < 0.5 else (("br", "tl"), ("bl", "tr"))
        )
        cells = [(s, r) for s in subjects for r in references]
        words = [self._word(roles[s], roles[r], lines) for s, r in cells]
        first = words.index(answer)
        s0, r0 = cells[first]
        members = []
        for i in [first, *[i for i in range(4) if i != first][: 3 if twins else 0]]:
            s, r = cells[i]
            varies = tuple(name for name, same in (("subject", s == s0), ("reference", r == r0)) if not same)
            question = f"Where is the {roles[s].name} relative to the {roles[r].name}?"
            members.append(Member(question, words[i], varies))
        pool = self._example_pairs(lines, {roles[c] for c in CORNERS})
        chosen = rng.sample(pool, min(examples, len(pool)))
        pairs = [
            (f"Where is the {a.name} relative to the {b.name}?", self._word(a, b, lines)) for a, b in chosen
        ]
        on_frame = {s for line in lines.values() for s in line}
        off_frame = tuple(s for s in shapes if s not in on_frame)
        return Questions(
            members,
            list(ANSWERS),
            examples=pairs,
            description=describe.chain(len(shapes), self._links(lines, rng), off_frame),
            facts={"lines": {name: [s.name for s in line] for name, line in lines.items()}},
        )

    def frame_roles(self, shapes: list[Shape], geometry: Geometry) -> dict[str, Shape]:
        """Return the frame of a canvas ``place`` made: the corners and outer shapes (its first eight
        shapes) and ``line:<name>:<k>`` for the k-th shape of each line going up its axis (a row:
        its first outer shape, the shapes at the corners' height, its last outer shape). Raises
        Impossible when a line's neighbours are not related along it by the relation rule."""
        if len(shapes) < FRAME:
            raise Impossible(f"a frame needs {FRAME} shapes")
        named = dict(zip([*CORNERS, *OUTER], shapes[:8], strict=True))
        for name, (first, (low, _), last) in LINES.items():
            row = name in ("bottom", "top")
            level = named[low].y if row else named[low].x
            inner = [
                s for s in shapes if s not in (named[first], named[last]) and (s.y if row else s.x) == level
            ]
            line = [named[first], *sorted(inner, key=lambda s: s.x if row else s.y), named[last]]
            relate, up = (horizontal, "Right") if row else (vertical, "Above")
            if any(relate(a, b, geometry) != up for a, b in itertools.pairwise(line)):
                raise Impossible(f"the {name} line is not ordered by the relation rule")
            named |= {f"line:{name}:{k}": shape for k, shape in enumerate(line)}
        return named

    @staticmethod
    def _example_pairs(lines: dict[str, list[Shape]], corners: set[Shape]) -> list[tuple[Shape, Shape]]:
        """Return the pairs a same-canvas example may ask about: two shapes of one line (not of two:
        the answer would have two words), not two corners, and a corner only with a shape beyond
        it (one between two corners would tell half of a member's answer)."""
        out = []
        for line in lines.values():
            ends = [i for i, s in enumerate(line) if s in corners]
            inside = set(line[ends[0] + 1 : ends[1]])
            for a, b in itertools.permutations(line, 2):
                pair = {a, b}
                shared = sum(a in other and b in other for other in lines.values())
                if pair <= corners or (pair & corners and pair & inside) or shared > 1:
                    continue  # a corner with its outer shape shares two lines: related on both axes
                out.append((a, b))
        return out

    @staticmethod
    def _word(a: Shape, b: Shape, lines: dict[str, list[Shape]]) -> str:
        """Return where ``a`` is relative to ``b`` on the line they share."""
        for name, line in lines.items():
            if a in line and b in line:
                up = "Right" if name in ("bottom", "top") else "Above"
                return up if line.index(a) > line.index(b) else OPPOSITE[up]
        raise ValueError(f"{a.name} and {b.name} share no line")

    @staticmethod
    def _links(lines: dict[str, list[Shape]], rng: random.Random) -> list[describe.Link]:
        """Return one link per pair of neighbours on each line, each told from either end and in
        either form at random, in a random order."""
        links = []
        for name, line in lines.items():
            up = "Right" if name in ("bottom", "top") else "Above"
            for low, high in itertools.pairwise(line):
                told = (low, up, high) if rng.random() < 0.5 else (high, OPPOSITE[up], low)
                links.append((*told, rng.random() < 0.5))
        rng.shuffle(links)
        return links
