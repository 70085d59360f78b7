//! memloom-core's integration tests: one binary, topic modules.

mod corpus;
mod entities;
mod golden;
mod props;
mod util;
