"""Sans-IO protocol cores: records, codec, framer, guard and state machines."""
