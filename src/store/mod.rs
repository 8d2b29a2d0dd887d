//! The SQLite store: one place opens the pool (WAL, busy timeout, migrations).
