//! How skillpipe writes a duration for people: one spelling everywhere (`skills show`, the
//! hints that say why a run stopped), so a timeout reads the same where it is set and where it
//! ended a run.

use std::time::Duration;

/// `d` in seconds, exact to the millisecond: `10 s`, `1.5 s`, `0.25 s` — never rounded, so
/// 1500 ms is not shown as a second it is not.
pub(crate) fn text(d: Duration) -> String {
    let (secs, millis) = (d.as_secs(), d.subsec_millis());
    match millis {
        0 => format!("{secs} s"),
        _ => {
            let frac = format!("{millis:03}");
            format!("{secs}.{} s", frac.trim_end_matches('0'))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_and_fractional_seconds() {
        let t = |ms| text(Duration::from_millis(ms));
        assert_eq!(t(1500), "1.5 s");
        assert_eq!(t(2500), "2.5 s");
        assert_eq!(t(30_000), "30 s");
        assert_eq!(t(250), "0.25 s");
        assert_eq!(t(1001), "1.001 s");
        assert_eq!(t(0), "0 s");
    }
}
