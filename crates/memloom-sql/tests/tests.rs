//! memloom-sql against a real PostgreSQL + pgvector (no mocks).
//!
//! Set `MEMLOOM_TEST_DATABASE_URL` to a server where the user may create databases (each test
//! makes its own); `bash scripts/test-sql.sh` starts a throwaway one. Without the variable the
//! tests print a skip line and pass, unless `MEMLOOM_REQUIRE_PG=1`.

mod util;

mod catalog;
mod embedder;
mod erasure;
mod forget;
mod fusion;
mod index_marks;
mod ingest;
mod integrity;
mod keyword;
mod maxscore;
mod memories;
mod migrations;
mod plans;
mod proxy;
mod recall;
mod remember;
mod rls;
mod static_table;
mod stats;
mod store;
mod tenant;
mod time;
mod turns;
