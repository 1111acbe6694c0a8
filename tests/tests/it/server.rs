//! Server behaviour over loopback: health, list, call, errors, auth, limits.
