"""Fitting per-model calibrations on labelled sets (`fit`) and bringing your own judge (`judge_setup`).
Pure functions over stored results: no model calls but the recording that `judge_setup` asks for."""
