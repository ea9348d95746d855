"""Settings, read once: the environment variables (`environment`) and `AuditOptions` (`options`)."""
