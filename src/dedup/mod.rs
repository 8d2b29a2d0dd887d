//! The duplicate and canonical-page engine.
