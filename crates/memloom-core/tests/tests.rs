//! memloom-core's integration tests: one binary, topic modules.

mod corpus;
mod entities;
mod fuzz_regressions;
mod golden;
mod props;
mod static_embed;
mod util;
