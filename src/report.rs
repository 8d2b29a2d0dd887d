//! Report rendering: rows to table, JSON or CSV.
