"""Workflows that run audits to fit something: bringing your own judge (`judge_setup`: record the
labelled sets with another model, fit its calibration, compare it with the shipped one) and a
profile fitted on your reviews (`profile_fit`). They sit above `pipeline`, which they drive, and
below the surfaces; `calibrate` stays pure fitting over stored results."""
