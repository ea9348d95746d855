"""Source documents: the `Document` model (`document`) and one loader per format (`formats`)."""
