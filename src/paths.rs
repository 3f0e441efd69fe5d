//! Where config, state, skills and agents live (XDG).
