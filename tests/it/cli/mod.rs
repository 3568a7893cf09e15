//! The command line as a new user meets it.

mod demo_walkthrough;
mod help;
