//! Skills (DESIGN §4): discovery, script detection, safe resolution.
