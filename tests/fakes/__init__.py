"""Real loopback stand-ins for provider endpoints, shared by tests and benches."""
