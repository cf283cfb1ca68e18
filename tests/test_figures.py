"""The figures module: deterministic PNGs and one colour per run."""

from common.figures import pyplot, run_colour, save_png


def _figure():
    fig, ax = pyplot().subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1], color=run_colour(0, 2))
    return fig


def test_a_saved_png_is_the_same_bytes_every_time_and_carries_no_metadata(tmp_path):
    first, second = tmp_path / "a" / "one.png", tmp_path / "two.png"
    save_png(_figure(), first)  # the parent directory is created
    save_png(_figure(), second)
    data = first.read_bytes()
    assert data[:4] == b"\x89PNG" and data == second.read_bytes()
    assert b"Software" not in data and b"Matplotlib" not in data
    assert pyplot().get_fignums() == []  # closed after saving


def test_runs_keep_distinct_colours_up_to_twenty():
    assert run_colour(0, 3) == run_colour(0, 10)  # tab10, matplotlib's default cycle
    assert len({run_colour(i, 10) for i in range(10)}) == 10
    assert len({run_colour(i, 20) for i in range(20)}) == 20
