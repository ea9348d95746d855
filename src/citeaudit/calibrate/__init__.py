"""Fitting per-model calibrations on labelled sets (`fit`), profiles on reviews (`profile`), and the
figures around them: pure functions over stored results, no model calls. The workflows that record
answers in order to fit (`citeaudit.workflows`) sit above the pipeline."""
