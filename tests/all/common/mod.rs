//! Shared helpers for the integration tests. Each test module uses only part of them.
#![allow(dead_code, unused_imports)]

pub mod home;
pub mod procs;
pub mod pty;
pub mod server;
pub mod spawn;
pub mod tmux;

pub use home::TestHome;
pub use server::{Recorded, Reply, Server};
