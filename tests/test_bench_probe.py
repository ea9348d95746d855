"""tools/bench_probe.py's parts that need no recording: the probe inputs it measures per layer and
the rule that decides whether `stacked` may become the default (issue 55)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from bench_probe import FEATURES, feature_layers, feature_vectors, rule

from citeaudit.judge.hidden_states import FINAL, LAYERS


def test_a_feature_reads_one_layer_or_averages_or_joins_several():
    vectors = {"last": np.array([[1.0, 2.0]]), "l_out-14": np.array([[3.0, 6.0]])}
    assert np.array_equal(feature_vectors("last", vectors), [[1.0, 2.0]])
    assert np.array_equal(feature_vectors("mean:last,l_out-14", vectors), [[2.0, 4.0]])
    assert np.array_equal(feature_vectors("concat:l_out-14,last", vectors), [[3.0, 6.0, 1.0, 2.0]])
    assert all(set(feature_layers(f)) <= set(LAYERS) for f in FEATURES) and FINAL in FEATURES
    for bad in ("l_out-99", "sum:last,l_out-14", "last,l_out-14", "mean:last,nothing"):
        with pytest.raises(SystemExit, match="not a layer"):
            feature_layers(bad)


def figures(rows: dict[str, tuple[int, float, int]]) -> pd.DataFrame:
    return pd.DataFrame([{"domain": d, "stand": s, "precision": p, "false_verified": f}
                         for d, (s, p, f) in rows.items()]).set_index("domain")


def test_stacked_must_let_more_stand_on_every_domain_at_no_worse_precision_or_false_verified():
    panel = figures({"a": (10, 0.9, 1), "b": (5, 1.0, 0), "all": (15, 0.93, 1)})
    assert rule(panel, figures({"a": (12, 0.95, 1), "b": (6, 1.0, 0), "all": (18, 0.96, 1)})) == (True, [])
    held, failed = rule(panel, figures({"a": (12, 0.95, 1), "b": (5, 1.0, 0), "all": (17, 0.96, 1)}))
    assert not held and failed == ["b: stand 5 ≤ 5"]
    held, failed = rule(panel, figures({"a": (11, 0.8, 2), "b": (9, 1.0, 0), "all": (20, 0.9, 2)}))
    assert not held and failed == ["a: precision 80.0% < 90.0%, false verified 2 > 1"]
