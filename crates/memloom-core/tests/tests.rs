//! memloom-core's integration tests: one binary, topic modules.

mod corpus;
mod golden;
mod props;
mod util;
