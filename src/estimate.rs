//! Change-rate estimation: observations and hints in, a Gamma posterior on the Poisson rate out (pure).
