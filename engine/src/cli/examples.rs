//! The examples at the end of each command's `--help` (as k6 and hyperfine end theirs), and of
//! its man page (`loadgate man`): commented command lines that run from the repository's root,
//! against the built-in test server (`loadgate serve`) or the files of `examples/`.
//!
//! Each constant is the text after the `Examples:` heading: a `#` comment line, then the
//! command lines it describes, indented by two spaces; a blank line between examples.

use clap::builder::StyledStr;
use clap::builder::styling::Style;

/// The heading of the examples, styled as clap styles its own headings (`Usage:`, `Options:`).
pub(crate) const HEADING: &str = "Examples:";

/// `text` under the `Examples:` heading: the `after_help` of a command.
pub(crate) fn examples(text: &str) -> StyledStr {
    let heading = Style::new().bold().underline();
    format!("{heading}{HEADING}{heading:#}\n{text}").into()
}

pub(crate) const LOADGATE: &str = "  # Run the quickstart spec: it starts its own test server, loads it for 10 s, gates on its SLOs
  loadgate run examples/quickstart.yaml --out result.json

  # A one-line run against the built-in test server (started first, in another terminal)
  loadgate serve
  loadgate quick -c 50 -z 10s http://127.0.0.1:8080/

  # The help of a command, its examples at the end
  loadgate help compare
";

pub(crate) const RUN: &str =
    "  # Run the quickstart (it starts its own test server) and write the result
  loadgate run examples/quickstart.yaml --out result.json

  # Run it again and compare with the first result: exit 4 on a regression
  loadgate run examples/quickstart.yaml --baseline result.json --out candidate.json

  # One JSON line instead of the summary, no progress line (for scripts)
  loadgate run examples/quickstart.yaml --format jsonl --quiet

  # Shard 2 of 4 of a spec that loads `loadgate serve --listen 127.0.0.1:18090`, its warmup
  # starting in 30 s (give every shard the same RFC 3339 time instead; then `loadgate merge`)
  loadgate run examples/shards.yaml --shard 2/4 --start-at +30s --out shard-2.json
";

pub(crate) const QUICK: &str = "  # The built-in test server, in another terminal
  loadgate serve

  # 50 connections for 10 seconds (oha -c 50 -z 10s)
  loadgate quick -c 50 -z 10s http://127.0.0.1:8080/

  # 1000 POST requests over 20 connections (hey -n 1000 -c 20 -m POST)
  loadgate quick -n 1000 -c 20 -m POST -d '{}' -T application/json 'http://127.0.0.1:8080/items?status=201'

  # 500 requests per second for 30 seconds, HTTP/2
  loadgate quick -z 30s -c 50 -q 500 --http2 http://127.0.0.1:8080/

  # Print the spec instead of running it: the start of a CI gate
  loadgate quick --emit-spec -c 50 -z 10s http://127.0.0.1:8080/ > api.loadgate.yaml
";

pub(crate) const CURL: &str = "  # The built-in test server, in another terminal
  loadgate serve

  # A browser's \"Copy as cURL\" after `--`: 10 connections for 10 seconds
  loadgate curl -c 10 -z 10s -- curl 'http://127.0.0.1:8080/search?size=4096' -H 'Accept: application/json'

  # The curl command as one quoted string, 500 requests
  loadgate curl -n 500 -- \"curl -X POST 'http://127.0.0.1:8080/items?status=201' -d '{}'\"
";

pub(crate) const VALIDATE: &str =
    "  # Check a spec against the schema and its semantics: every error with its line
  loadgate validate examples/quickstart.yaml
  loadgate validate examples/flow.yaml
";

pub(crate) const SCHEMA: &str =
    "  # The JSON Schema of specs, for an editor (yaml-language-server, VS Code)
  loadgate schema > loadgate.schema.json

  # The schemas of result files and of the JSON verdict
  loadgate schema result > result.schema.json
  loadgate schema verdict > verdict.schema.json
";

pub(crate) const SERVE: &str = "  # The test server on 127.0.0.1:8080; query parameters shape each response
  loadgate serve
  curl 'http://127.0.0.1:8080/search?size=4096&delay=5ms'

  # HTTP/1.1 and HTTP/2 over TLS, and HTTP/3, with the example certificate
  loadgate serve --listen 127.0.0.1:8443 --tls-cert examples/data/localhost-test.pem --tls-key examples/data/localhost-test.key --h3

  # gRPC as well: the Echo service of examples/echo.proto
  loadgate serve --grpc
";

pub(crate) const COMPARE: &str = "  # Two runs of the quickstart (`loadgate run --out`): exit 4 on a regression
  loadgate compare result.json candidate.json

  # The comparison as Markdown (a pull request comment) and as JUnit XML (test-report actions)
  loadgate compare result.json candidate.json --format md --output comparison.md
  loadgate compare result.json candidate.json --format junit --spec examples/quickstart.yaml --output junit.xml

  # Each rule judged against the level of a history of earlier results
  loadgate compare result.json candidate.json --baseline-history history/
";

pub(crate) const REPORT: &str = "  # An HTML report of a result
  loadgate report result.json --format html -o report.html

  # The latest result compared with a baseline, with a trend over the others
  loadgate report result.json candidate.json --baseline result.json --format md -o report.md

  # The dashboard of a history folder (`loadgate history add`)
  loadgate report --dashboard history/ -o dashboard.html
";

pub(crate) const MERGE: &str =
    "  # The results of 4 shards of one run (`loadgate run examples/shards.yaml --shard K/4
  # --start-at TIME --out shard-K.json`), merged and judged
  loadgate merge shard-1.json shard-2.json shard-3.json shard-4.json --out merged.json

  # Merge what came back, marked partial, when a shard was lost
  loadgate merge shard-1.json shard-2.json shard-4.json --out merged.json --allow-missing
";

pub(crate) const AB: &str = "  # A/A calibration: this machine's noise for each rule of the spec
  loadgate ab examples/quickstart.yaml --aa

  # Two servers, a baseline and a candidate, loaded at the same time (duet)
  loadgate serve --listen 127.0.0.1:8081 & loadgate serve --listen 127.0.0.1:8082 &
  loadgate ab examples/quickstart.yaml --baseline-url http://127.0.0.1:8081 --candidate-url http://127.0.0.1:8082 --out ab.json
  loadgate report ab.json --format html -o ab.html
";

pub(crate) const EXPORT: &str =
    "  # A stored result to Prometheus (remote write) and to an OpenTelemetry Collector (OTLP/HTTP)
  loadgate export result.json --to prometheus=http://127.0.0.1:9090/api/v1/write
  loadgate export result.json --to otlp=http://127.0.0.1:4318/v1/metrics
";

pub(crate) const HISTORY: &str =
    "  # Keep each result of main, list them, print the change points (the nightly report)
  loadgate history add history/ result.json --branch main --commit \"$(git rev-parse HEAD)\"
  loadgate history list history/
  loadgate history show history/ --format markdown -o changes.md
";

pub(crate) const HISTORY_ADD: &str =
    "  # Keep a result in the history folder history/, as the commit it measured
  loadgate history add history/ result.json --branch main --commit \"$(git rev-parse HEAD)\"
";

pub(crate) const HISTORY_LIST: &str =
    "  # Every result of a history, in time order; only the branch main of the spec quickstart
  loadgate history list history/
  loadgate history list history/ --branch main --spec quickstart
";

pub(crate) const HISTORY_SHOW: &str =
    "  # The change points and drifts of a history, as text and as Markdown (a job summary)
  loadgate history show history/
  loadgate history show history/ --format markdown -o changes.md

  # As JSON, a change point new within the last 10 results
  loadgate history show history/ --recent 10 --format json
";

pub(crate) const COMPLETIONS: &str = "  # bash: in this shell, or for every new one
  source <(loadgate completions bash)
  loadgate completions bash > ~/.local/share/bash-completion/completions/loadgate

  # zsh: a file _loadgate in a folder of $fpath
  loadgate completions zsh > ~/.zfunc/_loadgate

  # fish
  loadgate completions fish > ~/.config/fish/completions/loadgate.fish

  # PowerShell: in the profile
  loadgate completions powershell >> $PROFILE
";

pub(crate) const MAN: &str = "  # Read the manual page of loadgate, and of `loadgate history show`
  loadgate man | man -l -
  loadgate man history show | man -l -

  # Install a page where man finds it
  loadgate man run > ~/.local/share/man/man1/loadgate-run.1
";

pub(crate) const VERSION: &str =
    "  # The version, with what a bug report needs: commit, target, compiler
  loadgate version
";
