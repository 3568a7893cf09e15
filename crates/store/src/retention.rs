//! How long, and how many, records a log in the store keeps: the controller's local event log
//! and the central manager's fleet event store prune by the same two bounds.

use std::time::Duration;

/// How many events, and for how long, an event log keeps (zero: no bound).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retention {
    pub max_events: u64,
    pub max_age: Duration,
}

impl Retention {
    /// How many of `count` events are beyond the count bound (the oldest go).
    pub fn excess(&self, count: u64) -> u64 {
        if self.max_events > 0 {
            count.saturating_sub(self.max_events)
        } else {
            0
        }
    }

    /// The time (microseconds since the epoch) before which an event is too old at `now_micros`;
    /// `None` without an age bound. An age beyond the epoch keeps everything.
    pub fn cutoff_micros(&self, now_micros: u64) -> Option<u64> {
        let age = u64::try_from(self.max_age.as_micros()).unwrap_or(u64::MAX);
        (!self.max_age.is_zero()).then(|| now_micros.saturating_sub(age))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_bounds_keep_everything() {
        let none = Retention::default();
        assert_eq!(none.excess(u64::MAX), 0);
        assert_eq!(none.cutoff_micros(1_000_000), None);
        let keep = Retention {
            max_events: 3,
            max_age: Duration::from_secs(2),
        };
        assert_eq!((keep.excess(5), keep.excess(2)), (2, 0));
        assert_eq!(keep.cutoff_micros(5_000_000), Some(3_000_000));
        let forever = Retention {
            max_events: 0,
            max_age: Duration::from_secs(u64::MAX),
        };
        assert_eq!(forever.cutoff_micros(5_000_000), Some(0));
    }
}
