"""Stage four: what the user asked to be set aside or compared (inline suppressions,
per-file ignores, baselines, diffs, merged shards), then the scored result."""
