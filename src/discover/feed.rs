//! Feed parsing with feed-rs: entries become URLs with exact change times.
