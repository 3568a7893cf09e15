//! The phase driver: one request from its parsed head to the end of its answer, written once and
//! driven by both protocol front-ends.

pub mod inspect;
