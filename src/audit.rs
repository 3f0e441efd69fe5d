//! Audit log: one JSON line per decision, one write per line (DESIGN §3).
