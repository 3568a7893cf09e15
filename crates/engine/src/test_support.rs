//! Helpers the engine's unit tests share.

/// Asserts that `judge` holds for every value of `yes` and for none of `no`, naming the value
/// that breaks it (a predicate's tests are its two lists: what it must take and what it must not).
pub(crate) fn assert_judges(judge: impl Fn(&[u8]) -> bool, yes: &[&[u8]], no: &[&[u8]]) {
    for v in yes {
        assert!(judge(v), "should hold for {:?}", String::from_utf8_lossy(v));
    }
    for v in no {
        assert!(
            !judge(v),
            "should not hold for {:?}",
            String::from_utf8_lossy(v)
        );
    }
}
