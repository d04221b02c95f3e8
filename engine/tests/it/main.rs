//! The engine's integration tests, in one binary (as ripgrep's `tests/tests.rs`): each module was
//! a test binary of its own, each linking the whole crate. Helpers shared by all of them are in
//! `support`; load tests that must not share the machine take turns through `support::turn`.
//! `scripts/test` runs it one test at a time (`--test-threads=1`): a test that takes the turn can
//! still meet one that does not (e.g. 4 shard processes beside an aioquic server starting).

mod support;

mod ab;
mod baseline_history;
mod checks_data;
mod cli_compare;
mod cli_generated;
mod cli_help;
mod cli_inputs;
mod cli_shard;
mod cli_validate;
mod compare_real;
mod compare_tags;
mod console;
mod dashboard;
mod export;
mod fixtures;
mod flows;
mod fuzz_curl;
mod fuzz_http;
mod grpc;
mod h3_report;
mod h3_run;
mod hidden_chars;
mod history;
mod hostile;
mod html_browser;
mod http_options;
mod integrity;
mod limits;
mod load_model;
mod many_targets;
mod measures;
mod merge;
mod older_results;
mod properties;
mod quick;
mod quick_protocols;
mod quick_secrets;
mod reports;
mod reports_decisions;
mod reports_scenarios;
mod result_schema;
mod run;
mod scenario_plan;
mod scenarios_result;
mod schema;
mod serve;
mod serve_grpc;
mod serve_h2;
mod serve_h3;
mod serve_ws;
mod shards;
mod spec_corpus;
mod tls_h2;
mod transport_integrity;
mod verdict_schema;
mod websocket;
