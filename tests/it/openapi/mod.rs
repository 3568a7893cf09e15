//! OpenAPI enforcement: Swagger 2.0, OpenAPI 3.0 and 3.1, real-world specs.

mod petstore;
mod policy;
mod realworld;
