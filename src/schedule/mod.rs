//! Schedule files: TOML read with serde, then validated into typed sites with file:line errors.
