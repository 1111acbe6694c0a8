//! Hand-written fixtures.
