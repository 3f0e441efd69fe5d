//! Agent configs (DESIGN §5) and the system prompt (§4).
