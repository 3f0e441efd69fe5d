//! Shared helpers for the integration tests. Each test crate uses only part of them.
#![allow(dead_code, unused_imports)]

pub mod home;
pub mod procs;
pub mod server;
pub mod spawn;

pub use home::TestHome;
pub use server::{Recorded, Reply, Server};
