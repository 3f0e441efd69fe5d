//! Bounded exponential backoff for 429 and 5xx answers.

use std::time::Duration;

/// How often and how long to wait before sending a request again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Total attempts, the first included (1 = never retry).
    pub max_attempts: u32,
    /// Wait before the second attempt; doubled for each further one.
    pub base_delay: Duration,
    /// Upper bound on any wait. A server asking (Retry-After) for longer is not retried:
    /// an interactive user is better served by the error than by a long silent wait.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

/// Why no further attempt is made at a retryable status (429, 5xx).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GiveUp {
    /// All attempts were used.
    Exhausted {
        /// Attempts made, the first included.
        attempts: u32,
    },
    /// The server asked (Retry-After) to wait longer than [`RetryPolicy::max_delay`].
    WaitTooLong {
        /// The wait it asked for.
        asked: Duration,
    },
}

impl GiveUp {
    /// A short note for the error message; empty when no retry was allowed at all.
    pub fn note(&self) -> String {
        match self {
            GiveUp::Exhausted { attempts: 1 } => String::new(),
            GiveUp::Exhausted { attempts } => format!("gave up after {attempts} attempts"),
            GiveUp::WaitTooLong { asked } => format!(
                "the server asks to wait {} s before retrying",
                asked.as_secs()
            ),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt number `attempt` (1-based), honouring the server's
    /// Retry-After when it gave one.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Result<Duration, GiveUp> {
        if attempt >= self.max_attempts {
            return Err(GiveUp::Exhausted { attempts: attempt });
        }
        match retry_after {
            Some(asked) if asked > self.max_delay => Err(GiveUp::WaitTooLong { asked }),
            Some(asked) => Ok(asked),
            None => {
                let factor = 1u32 << (attempt - 1).min(16);
                Ok(self.base_delay.saturating_mul(factor).min(self.max_delay))
            }
        }
    }
}

/// `Retry-After` in its delta-seconds form (an HTTP date is ignored: backoff applies instead).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(250),
        }
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = policy();
        assert_eq!(p.delay(1, None), Ok(Duration::from_millis(100)));
        assert_eq!(p.delay(2, None), Ok(Duration::from_millis(200)));
        assert_eq!(p.delay(3, None), Ok(Duration::from_millis(250)));
        assert_eq!(p.delay(4, None), Err(GiveUp::Exhausted { attempts: 4 }));
    }

    #[test]
    fn retry_after_is_honoured_within_the_cap() {
        let p = policy();
        assert_eq!(p.delay(1, Some(Duration::ZERO)), Ok(Duration::ZERO));
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(5))),
            Err(GiveUp::WaitTooLong {
                asked: Duration::from_secs(5)
            })
        );
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("0"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }
}
