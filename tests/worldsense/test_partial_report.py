"""The WorldSense report says plainly when a partial results file is in the test set."""

from common.report import section_text
from tests.worldsense.fixtures import answers_for, section, tf_tuple, write_testset


def test_report_text_names_a_partial_results_file(tmp_path):
    trials = [t for i in range(4) for t in tf_tuple(f"t{i}", ("Infer.normal", "Infer.trivial")[i % 2], 3)]
    full = answers_for(trials, [1, 0, 1, 1])  # two problems: the published average is computed
    partial = full[:5] + [None] * 3
    directory = write_testset(tmp_path / "ts", trials, {"Full": full, "Half": partial})
    result = section(directory)
    text = section_text(result)
    assert "    NOTES\n" in text and text.index("NOTES") < text.index("ACCURACY")  # before the tables
    assert "Half (basic): PARTIAL results, 5 of 8 trials answered" in text
    assert "Full (basic): PARTIAL" not in text
    assert any("5 of 8 trials answered" in note for note in result.notes)  # the section API keeps it too


def test_complete_results_print_no_warning(tmp_path):
    trials = [t for i in range(2) for t in tf_tuple(f"t{i}", "Infer.normal", 3)]
    directory = write_testset(tmp_path / "ts", trials, {"Full": answers_for(trials, [1, 0])})
    result = section(directory)
    assert "PARTIAL" not in section_text(result) and not result.notes


def test_a_run_without_one_complete_tuple_still_has_its_row_in_the_headline(tmp_path):
    trials = [t for i in range(4) for t in tf_tuple(f"t{i}", ("Infer.normal", "Infer.trivial")[i % 2], 3)]
    full = answers_for(trials, [1, 0, 1, 1])  # two problems: the published average is computed
    first = full[:1] + [None] * 7  # one trial of a two-trial tuple
    directory = write_testset(tmp_path / "ts", trials, {"Full": full, "First": first})
    cells = {run: cell for run, _, cell, _ in section(directory).headline["cells"]}
    assert cells["First (basic)"] == "no complete tuple yet (partial: 1 of 8 trials)"
    assert "partial" not in cells["Full (basic)"]
