"""The usage charts' value axis: round labels, the last at or above the tallest bar."""

from __future__ import annotations

import pytest

from gui.widgets.usage_charts import axis_ticks


@pytest.mark.parametrize(
    ("top", "ticks"),
    [
        (0.0, [0.0, 0.5, 1.0]),
        (0.003, [0.0, 0.001, 0.002, 0.003]),
        (3890, [0.0, 1000.0, 2000.0, 3000.0, 4000.0]),
        (7, [0.0, 2.0, 4.0, 6.0, 8.0]),
        (1.0, [0.0, 0.5, 1.0]),
    ],
)
def test_ticks_are_round_and_reach_the_top(top: float, ticks: list[float]) -> None:
    assert axis_ticks(top) == ticks


def test_never_more_than_four_steps() -> None:
    for top in (0.0013, 0.37, 1, 9.99, 12, 101, 4999, 123456):
        ticks = axis_ticks(top)
        assert len(ticks) <= 5 and ticks[-1] >= top
