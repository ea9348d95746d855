"""Citation inputs, all read into one `Citation` record (`records`): quote files, line answers
(`lines`), source-id answers (`sourceid`), vendor API responses (`responses`) and datasets (`dataset`)."""
