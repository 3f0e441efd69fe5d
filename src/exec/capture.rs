//! Reading one output stream to the end while keeping at most a fixed number of bytes: the rest
//! is read and dropped, so the child never blocks on a full pipe and memory stays bounded.

use tokio::io::{AsyncRead, AsyncReadExt};

#[derive(Debug, Default)]
pub struct Capture {
    pub bytes: Vec<u8>,
    pub truncated: bool,
    /// Every byte the stream carried, kept or not (for the over-cap warning).
    pub seen: u64,
    cap: usize,
}

impl Capture {
    pub fn new(cap: usize) -> Capture {
        Capture {
            cap,
            ..Capture::default()
        }
    }

    /// Keep what fits under the cap; note that the rest was dropped.
    pub fn push(&mut self, data: &[u8]) {
        self.seen += data.len() as u64;
        let room = self.cap.saturating_sub(self.bytes.len());
        let keep = room.min(data.len());
        self.bytes.extend_from_slice(&data[..keep]);
        if keep < data.len() {
            self.truncated = true;
        }
    }

    /// Read `reader` (if there is one) to its end (or first error).
    pub async fn fill(&mut self, reader: Option<impl AsyncRead + Unpin>) {
        let Some(mut reader) = reader else { return };
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut chunk).await {
                Ok(0) => break,
                Ok(n) => self.push(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_at_most_the_cap() {
        let mut c = Capture::new(5);
        c.push(b"abc");
        assert!(!c.truncated);
        c.push(b"defg");
        assert_eq!(c.bytes, b"abcde");
        assert!(c.truncated);
        c.push(b"");
        assert_eq!(c.bytes.len(), 5);
    }
}
