//! The engine's verdicts and `policy check`: case tables, links, real-world policies.

mod cases;
mod check;
mod corpus;
mod engine;
mod links;
