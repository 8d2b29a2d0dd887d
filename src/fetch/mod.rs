//! One HTTP check: conditional GET or HEAD, redirects by hand, timeouts, body cap, charset, fingerprint.
