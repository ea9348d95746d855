"""Steps 3 and 4: routing on the calibrated score (`route`, `calibration`), human reviews bound by a
fingerprint (`reviews`, `fingerprint`), and each answer's ACCEPT / REVIEW / REJECT (`decision`)."""
