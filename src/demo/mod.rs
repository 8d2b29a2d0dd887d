//! `freshet demo`: a living synthetic web on loopback, refreshed by the real refresher.
