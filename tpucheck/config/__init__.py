"""Configuration: the config file, the settings resolved once from it and the flags, and
the starter template."""
