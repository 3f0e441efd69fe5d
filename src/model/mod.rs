//! Streaming model clients and settings (DESIGN §6).
