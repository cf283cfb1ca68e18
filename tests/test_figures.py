"""The figures module: deterministic PNGs and one colour per run."""

from common.figures import PALETTE, pyplot, run_colours, save_png


def _figure():
    fig, ax = pyplot().subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1], color=run_colours(["oracle"])["oracle"])
    return fig


def test_a_saved_png_is_the_same_bytes_every_time_and_carries_no_metadata(tmp_path):
    first, second = tmp_path / "a" / "one.png", tmp_path / "two.png"
    save_png(_figure(), first)  # the parent directory is created
    save_png(_figure(), second)
    data = first.read_bytes()
    assert data[:4] == b"\x89PNG" and data == second.read_bytes()
    assert b"Software" not in data and b"Matplotlib" not in data
    assert pyplot().get_fignums() == []  # closed after saving


def test_a_run_keeps_its_colour_whatever_runs_are_beside_it():
    names = ["oracle", "random", "gpt-4o-mini (basic)", "llamacpp", "first"]
    alone = {name: run_colours([name])[name] for name in names}
    together = run_colours(names)
    assert len(set(together.values())) == len(names)  # distinct within a figure
    assert run_colours(list(reversed(names))) == together  # not from the order
    # a name keeps the colour it has alone unless another name of the figure picked it first
    assert sum(together[name] == alone[name] for name in names) >= len(names) - 1
    assert run_colours(names[:2]) == {name: together[name] for name in names[:2]}


def test_runs_keep_distinct_colours_up_to_twenty():
    names = [f"model-{i}" for i in range(20)]
    assert len(set(run_colours(names).values())) == len(PALETTE) == 20
