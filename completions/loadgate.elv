
use builtin;
use str;

set edit:completion:arg-completer[loadgate] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'loadgate'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'loadgate'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand run 'Run a spec: start its service, apply the load, check the SLOs'
            cand quick 'A one-line run, with the flags of hey, oha and vastar: `loadgate quick -c 50 -z 10s URL`. It builds a spec from its flags (`--emit-spec` prints it) and runs it as `run` does; several URLs run one after another'
            cand curl 'A one-line run of a curl command (a browser''s "Copy as cURL"): `loadgate curl -c 10 -z 5s -- curl ''https://...'' -H ''...''`. Load flags as `quick`''s'
            cand validate 'Check a spec against the schema and its semantics, without running it'
            cand schema 'Print a JSON Schema: of the spec (default) or of the result file'
            cand serve 'Serve the built-in test target: responses shaped by query parameters'
            cand compare 'Compare a result with a baseline result; exit 0 pass, 1 SLO failed, 3 the current run was interrupted (not judged), 4 regression, 5 invalid measurement'
            cand report 'Render a result (compared with a baseline, with a trend over earlier results) as Markdown, HTML, JUnit XML or JSON'
            cand merge 'Merge the results of several shards of one run into one result, losslessly, print its summary and judge it as `run` does: exit 0 pass, 1 SLO failed, 5 invalid measurement'
            cand ab 'Load a baseline and a candidate at the same time with the spec''s load (duet) and judge each regression rule on the paired seconds; exit 0 pass, 1 SLO failed, 4 regression, 5 invalid measurement'
            cand export 'Send a stored result''s metrics to Prometheus (remote write) or an OpenTelemetry Collector (OTLP/HTTP), as `run --export` does after a run; exit 0 when every export succeeded, 3 otherwise'
            cand history 'Keep results in a history folder (`add`), list them (`list`), and report the change points and drifts in their series (`show`: the nightly report). Exit 0 unless the input cannot be read (2) or written (3)'
            cand completions 'Print the completion script of a shell (bash, zsh, fish, powershell, elvish) to stdout; docs/cli.md says where each shell reads it'
            cand man 'Print the manual page (roff) of loadgate or of one of its commands to stdout (`man -l -` reads it); the pages of every command are in docs/man/'
            cand version 'Print the version (as `--version`), the commit it was built from, its target triple and compiler: what a bug report needs'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'loadgate;run'= {
            cand --out 'Write the result artifact (JSON) here; written whole or not at all. A folder that cannot take the file is refused before any load is sent (exit 2)'
            cand --baseline 'Compare the run with this baseline result and exit 4 on a regression; the file must exist'
            cand --format 'What the run prints: the text summary, one JSON line, or one CSV row'
            cand --output 'Append the run''s output (in `--format`) to this file instead of stdout, which then shows the text summary; a CSV header is written only into a new or empty file'
            cand --shard 'Run shard K of N (`K/N`, e.g. `2/4`): this process applies its share of the load (connections, arrival rate, max_in_flight and request counts split so that the shares add up to the spec''s; stages keep their timing) and records `K/N` in its result. SLOs are judged on the merged result (`loadgate merge`): a shard alone reports them and exits 0 unless it could not run. Not with `--baseline` (compare the merged result); `abort_on_fail` does not act on a shard (stopping every shard is out of scope)'
            cand --start-at 'Start the run (its warmup) at this time: RFC 3339 in UTC (`2026-11-24T10:00:00Z`) or `+30s` from now; it waits until then (Ctrl-C ends the wait). Every shard given the same time warms up and starts measuring on the same wall-clock second; a time already past shortens the warmup by the lateness, or is refused (exit 2) when past by more than the warmup'
            cand --export 'After the run, send its metrics (per-second series and whole-run summaries) to `prometheus=URL` (remote write 1.0, e.g. `http://prometheus:9090/api/v1/write`) or `otlp=URL` (OTLP/HTTP JSON, e.g. `http://collector:4318/v1/metrics`); repeatable. A failed export is reported on stderr and does not change the exit code; each ends within about 30 s (10 s per attempt, 3 attempts). Extra headers (authentication): `LOADGATE_EXPORT_HEADERS="Name=value,..."`. A bad KIND=URL is refused before any load is sent (exit 2)'
            cand -q 'No progress line on stderr'
            cand --quiet 'No progress line on stderr'
            cand --no-color 'No colour in the summary (as the `NO_COLOR` environment variable; without either, colour is used when stdout is a terminal whose `TERM` is not `dumb`, or with `CLICOLOR_FORCE=1`, never with `CLICOLOR=0`)'
            cand -v 'The summary''s long sections too: every percentile, the insight lines, the phases, the latency histogram, the upstream time, streamed bodies, the size and transfer rate, the client CPU and the stage table'
            cand --verbose 'The summary''s long sections too: every percentile, the insight lines, the phases, the latency histogram, the upstream time, streamed bodies, the size and transfer rate, the client CPU and the stage table'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'loadgate;quick'= {
            cand -m 'HTTP method (oha, hey `-m`)'
            cand --method 'HTTP method (oha, hey `-m`)'
            cand -d 'Request body (hey, oha `-d`)'
            cand --body 'Request body (hey, oha `-d`)'
            cand -D 'Request body from a file, relative to the current folder (hey `-D`)'
            cand --body-file 'Request body from a file, relative to the current folder (hey `-D`)'
            cand -T 'Content-Type header (hey, oha `-T`)'
            cand --content-type 'Content-Type header (hey, oha `-T`)'
            cand -H 'A request header, `Name: value` (repeatable)'
            cand --header 'A request header, `Name: value` (repeatable)'
            cand -A 'Accept header (hey, oha `-A`)'
            cand --accept 'Accept header (hey, oha `-A`)'
            cand -a 'Basic authentication, `user:pass`: an `Authorization` header that no output shows'
            cand --basic-auth 'Basic authentication, `user:pass`: an `Authorization` header that no output shows'
            cand --cacert 'Trust the CA certificates of this PEM file, relative to the current folder'
            cand --tls-ciphers 'TLS cipher suites to offer, comma-separated rustls names (`TLS13_AES_128_GCM_SHA256,...`)'
            cand --redirect 'Follow at most N redirects on the same origin (default 10, as hey and oha)'
            cand -n 'Requests to measure (default 200 when no `-z`)'
            cand --requests 'Requests to measure (default 200 when no `-z`)'
            cand -c 'Connections (default 50). With `-q`: the most requests in flight at once'
            cand --connections 'Connections (default 50). With `-q`: the most requests in flight at once'
            cand -z 'How long to measure (`10s`, `1m`), instead of `-n`'
            cand --duration 'How long to measure (`10s`, `1m`), instead of `-n`'
            cand -q 'Requests per second over the whole run, on a schedule whatever the server does (the open model)'
            cand --rate 'Requests per second over the whole run, on a schedule whatever the server does (the open model)'
            cand --rps 'Requests per second of each connection (loadgen-rs `--rps`; the closed model''s pacing)'
            cand -p 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`'
            cand --http2-parallel 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`'
            cand --streams 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`'
            cand -t 'Request timeout (`10s`; a bare number is seconds, as hey''s `-t`). Default 10s'
            cand --timeout 'Request timeout (`10s`; a bare number is seconds, as hey''s `-t`). Default 10s'
            cand --connect-timeout 'Connect timeout (`2s`; default: the request timeout)'
            cand --threads 'Worker threads (rewrk, loadgen-rs `--threads`; default: the number of CPUs)'
            cand -w 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted'
            cand --warmup 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted'
            cand --ramp-up 'Ramp the load up from 0 over this long before measuring (not counted); needs `-z`'
            cand --slow 'Count responses at least this slow (`1s`; plt `--slow`)'
            cand --status-code 'The expected status code; any other counts as an error (default: any 2xx)'
            cand --delay 'Pause between URLs (`2s`)'
            cand --rounds 'Run each URL N times and summarise the rounds: mean and standard deviation of the RPS and of each percentile (rewrk `--rounds`)'
            cand --format 'What each run prints: the text summary, one JSON line, or one CSV row'
            cand --output 'Append each run''s output (in `--format`) to this file instead of stdout, which then shows the text summary; a CSV header is written only into a new or empty file'
            cand --http2 'Speak HTTP/2 (over TLS by ALPN, over cleartext with prior knowledge)'
            cand --http3 'Speak HTTP/3 over QUIC (`https://` URLs only)'
            cand --http1.1 'Speak HTTP/1.1, over TLS too (ALPN offers `http/1.1` alone); the default for `http://`'
            cand -k 'Accept any server certificate (test setups only; reports mark the run insecure)'
            cand --insecure 'Accept any server certificate (test setups only; reports mark the run insecure)'
            cand --disable-compression 'Do not offer `Accept-Encoding: gzip` (offered by default, as hey does)'
            cand --disable-redirects 'Do not follow redirects (`--redirect 0`)'
            cand --disable-keepalive 'Open a new connection for every request'
            cand --emit-spec 'Print the equivalent spec (YAML) and exit without sending a request: the run as a CI gate (`loadgate run SPEC`). Several URLs: one document each, separated by `---`'
            cand -v 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to'
            cand --verbose 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to'
            cand --no-color 'No colour in the summary (as the `NO_COLOR` environment variable; colour is only ever used when stdout is a terminal)'
            cand --quiet 'No progress line on stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'loadgate;curl'= {
            cand -n 'Requests to measure (default 200 when no `-z`)'
            cand --requests 'Requests to measure (default 200 when no `-z`)'
            cand -c 'Connections (default 50). With `-q`: the most requests in flight at once'
            cand --connections 'Connections (default 50). With `-q`: the most requests in flight at once'
            cand -z 'How long to measure (`10s`, `1m`), instead of `-n`'
            cand --duration 'How long to measure (`10s`, `1m`), instead of `-n`'
            cand -q 'Requests per second over the whole run, on a schedule whatever the server does (the open model)'
            cand --rate 'Requests per second over the whole run, on a schedule whatever the server does (the open model)'
            cand --rps 'Requests per second of each connection (loadgen-rs `--rps`; the closed model''s pacing)'
            cand -p 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`'
            cand --http2-parallel 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`'
            cand --streams 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`'
            cand -t 'Request timeout (`10s`; a bare number is seconds, as hey''s `-t`). Default 10s'
            cand --timeout 'Request timeout (`10s`; a bare number is seconds, as hey''s `-t`). Default 10s'
            cand --connect-timeout 'Connect timeout (`2s`; default: the request timeout)'
            cand --threads 'Worker threads (rewrk, loadgen-rs `--threads`; default: the number of CPUs)'
            cand -w 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted'
            cand --warmup 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted'
            cand --ramp-up 'Ramp the load up from 0 over this long before measuring (not counted); needs `-z`'
            cand --slow 'Count responses at least this slow (`1s`; plt `--slow`)'
            cand --status-code 'The expected status code; any other counts as an error (default: any 2xx)'
            cand --delay 'Pause between URLs (`2s`)'
            cand --rounds 'Run each URL N times and summarise the rounds: mean and standard deviation of the RPS and of each percentile (rewrk `--rounds`)'
            cand --format 'What each run prints: the text summary, one JSON line, or one CSV row'
            cand --output 'Append each run''s output (in `--format`) to this file instead of stdout, which then shows the text summary; a CSV header is written only into a new or empty file'
            cand --disable-keepalive 'Open a new connection for every request'
            cand --emit-spec 'Print the equivalent spec (YAML) and exit without sending a request: the run as a CI gate (`loadgate run SPEC`). Several URLs: one document each, separated by `---`'
            cand -v 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to'
            cand --verbose 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to'
            cand --no-color 'No colour in the summary (as the `NO_COLOR` environment variable; colour is only ever used when stdout is a terminal)'
            cand --quiet 'No progress line on stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'loadgate;validate'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'loadgate;schema'= {
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'loadgate;serve'= {
            cand --listen 'Address to listen on (loopback by default)'
            cand --threads 'Worker threads (default: the number of CPUs)'
            cand --tls-cert 'Speak TLS (HTTP/1.1 and HTTP/2 by ALPN) with this certificate chain (PEM)'
            cand --tls-key 'The private key of `--tls-cert` (PEM)'
            cand --tls-client-ca 'Require client certificates signed by a CA in this PEM file (mTLS)'
            cand --h3 'Also answer HTTP/3 (QUIC, UDP) on the same port number; needs --tls-cert and --tls-key'
            cand --grpc 'Also answer gRPC: the `loadgate.echo.v1.Echo` service of examples/echo.proto (h2c over cleartext, HTTP/2 by ALPN over TLS)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'loadgate;compare'= {
            cand --baseline-history 'Earlier results (files, or folders of `.json` results such as a `loadgate history` folder; repeatable): each rule is judged against the level of those of this spec and runner type (and the baseline''s branch) since their last change point; with fewer than 5 of them, it is inconclusive'
            cand --format 'Output format'
            cand --output 'Write the output here instead of stdout'
            cand --templates 'A folder whose templates (report.md, report.html, junit.xml) replace the built-in ones; it must exist and hold at least one of them'
            cand --spec 'The spec file the results came from, as the repository names it (e.g. `perf/api.loadgate.yaml`): the JUnit report gives it as each test case''s `file`, so test-report actions annotate the spec. When it is the file the run was made from (its SHA-256 is the result''s `spec.hash`), the JSON verdict gives each SLO and rule its `line` in it'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'loadgate;report'= {
            cand --dashboard 'Instead of a report on results: the dashboard of the history in this folder (a `loadgate history` folder, or any folder of result files), one self-contained HTML page: per spec and runner type, each scope''s p50, p95, p99, throughput and error rate over the results, change points marked, each point linking to its commit'
            cand --branch 'With `--dashboard`: only the results of this branch (as they record it)'
            cand --baseline 'Compare the latest result with this baseline result'
            cand --baseline-history 'With `--baseline`: earlier results (files or folders; repeatable) whose level each rule is judged against, as `compare --baseline-history`'
            cand --format 'Output format'
            cand -o 'Write the report here instead of stdout'
            cand --output 'Write the report here instead of stdout'
            cand --templates 'A folder whose templates (report.md, report.html, junit.xml, dashboard.html) replace the built-in ones; it must exist and hold at least one of them'
            cand --spec 'The spec file the results came from, as the repository names it (e.g. `perf/api.loadgate.yaml`): the JUnit report gives it as each test case''s `file`, so test-report actions annotate the spec. When it is the file the run was made from (its SHA-256 is the result''s `spec.hash`), the JSON verdict gives each SLO and rule its `line` in it. With `--dashboard`: the name of the one spec to show (the spec''s `name`)'
            cand --window 'How many runs the trend shows, the latest included'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'loadgate;merge'= {
            cand --out 'Write the merged result here'
            cand --allow-missing 'Merge even when shards of the run are missing (`--shard K/N` results whose K do not cover 1..N); the merged result is then marked partial and lists the missing shards'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'loadgate;ab'= {
            cand --baseline-url 'The baseline''s `defaults.base_url`, replacing the spec''s'
            cand --candidate-url 'The candidate''s `defaults.base_url`, replacing the spec''s'
            cand --baseline 'A value of `${NAME}` for the baseline, before the environment''s (repeatable)'
            cand --candidate 'A value of `${NAME}` for the candidate, before the environment''s (repeatable)'
            cand --epoch 'Length of the epochs that are paired: a whole fraction of a second (1s, 500ms, 250ms, 200ms, 100ms). Shorter epochs give more pairs, a narrower interval, as long as each holds enough responses for the rules'' percentiles. Default: the spec''s `ab.epoch`, else 250ms in duet mode, 1s in alternating mode (which takes whole seconds)'
            cand --mode 'How the sides are loaded: `duet`, both at the same time on one schedule; or `alternating`, one epoch at a time in ABBA blocks with a random start. Default: the spec''s `ab.mode`, else `duet`'
            cand --sub-runs 'Sub-runs per invocation, an even number, at least 4: the spec''s measured duration is split among them, and the sides swap positions from one to the next (which side starts first and keeps the schedule); the paired verdict is taken across them. Default: the spec''s `ab.sub_runs`, else 8, fewer (never below 4) when a sub-run would measure under 0.5 s'
            cand --out 'Write both sides'' results and their epochs (JSON) here, whole or not at all; `loadgate report FILE` renders it. A folder that cannot take the file is refused before any load is sent (exit 2)'
            cand --aa 'A/A calibration: the candidate is the baseline (its URL, values and service); prints per rule the noise of this machine at this run length (the minimum detectable effect) and the run length that would see the rule''s allowed change'
            cand -q 'No progress line on stderr'
            cand --quiet 'No progress line on stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'loadgate;export'= {
            cand --to 'Where to send it: `prometheus=URL` or `otlp=URL`, as `run --export`; repeatable'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'loadgate;history'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand add 'Add a result file to the history folder DIR and print the stored file''s path (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op'
            cand list 'List the results of a history (or of any folders and files of results), in time order: time, spec, branch, commit, runner type, file'
            cand show 'The change-point report: per spec and runner type, each change point in the series of p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it finds'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'loadgate;history;add'= {
            cand --branch 'The measured code''s branch, instead of the one the result records'
            cand --commit 'The measured code''s commit (full SHA), instead of the one the result records'
            cand --commit-url 'A web page of the commit, instead of the one the result records'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'loadgate;history;list'= {
            cand --spec 'Only the results of the spec of this name'
            cand --branch 'Only the results of this branch'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'loadgate;history;show'= {
            cand --spec 'Only the results of the spec of this name'
            cand --branch 'Only the results of this branch'
            cand --recent 'A change point is new when it is within the last N results of its spec and runner type'
            cand --format 'Output format'
            cand -o 'Write the report here instead of stdout (whole or not at all)'
            cand --output 'Write the report here instead of stdout (whole or not at all)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'loadgate;history;help'= {
            cand add 'Add a result file to the history folder DIR and print the stored file''s path (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op'
            cand list 'List the results of a history (or of any folders and files of results), in time order: time, spec, branch, commit, runner type, file'
            cand show 'The change-point report: per spec and runner type, each change point in the series of p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it finds'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'loadgate;history;help;add'= {
        }
        &'loadgate;history;help;list'= {
        }
        &'loadgate;history;help;show'= {
        }
        &'loadgate;history;help;help'= {
        }
        &'loadgate;completions'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'loadgate;man'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'loadgate;version'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'loadgate;help'= {
            cand run 'Run a spec: start its service, apply the load, check the SLOs'
            cand quick 'A one-line run, with the flags of hey, oha and vastar: `loadgate quick -c 50 -z 10s URL`. It builds a spec from its flags (`--emit-spec` prints it) and runs it as `run` does; several URLs run one after another'
            cand curl 'A one-line run of a curl command (a browser''s "Copy as cURL"): `loadgate curl -c 10 -z 5s -- curl ''https://...'' -H ''...''`. Load flags as `quick`''s'
            cand validate 'Check a spec against the schema and its semantics, without running it'
            cand schema 'Print a JSON Schema: of the spec (default) or of the result file'
            cand serve 'Serve the built-in test target: responses shaped by query parameters'
            cand compare 'Compare a result with a baseline result; exit 0 pass, 1 SLO failed, 3 the current run was interrupted (not judged), 4 regression, 5 invalid measurement'
            cand report 'Render a result (compared with a baseline, with a trend over earlier results) as Markdown, HTML, JUnit XML or JSON'
            cand merge 'Merge the results of several shards of one run into one result, losslessly, print its summary and judge it as `run` does: exit 0 pass, 1 SLO failed, 5 invalid measurement'
            cand ab 'Load a baseline and a candidate at the same time with the spec''s load (duet) and judge each regression rule on the paired seconds; exit 0 pass, 1 SLO failed, 4 regression, 5 invalid measurement'
            cand export 'Send a stored result''s metrics to Prometheus (remote write) or an OpenTelemetry Collector (OTLP/HTTP), as `run --export` does after a run; exit 0 when every export succeeded, 3 otherwise'
            cand history 'Keep results in a history folder (`add`), list them (`list`), and report the change points and drifts in their series (`show`: the nightly report). Exit 0 unless the input cannot be read (2) or written (3)'
            cand completions 'Print the completion script of a shell (bash, zsh, fish, powershell, elvish) to stdout; docs/cli.md says where each shell reads it'
            cand man 'Print the manual page (roff) of loadgate or of one of its commands to stdout (`man -l -` reads it); the pages of every command are in docs/man/'
            cand version 'Print the version (as `--version`), the commit it was built from, its target triple and compiler: what a bug report needs'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'loadgate;help;run'= {
        }
        &'loadgate;help;quick'= {
        }
        &'loadgate;help;curl'= {
        }
        &'loadgate;help;validate'= {
        }
        &'loadgate;help;schema'= {
        }
        &'loadgate;help;serve'= {
        }
        &'loadgate;help;compare'= {
        }
        &'loadgate;help;report'= {
        }
        &'loadgate;help;merge'= {
        }
        &'loadgate;help;ab'= {
        }
        &'loadgate;help;export'= {
        }
        &'loadgate;help;history'= {
            cand add 'Add a result file to the history folder DIR and print the stored file''s path (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op'
            cand list 'List the results of a history (or of any folders and files of results), in time order: time, spec, branch, commit, runner type, file'
            cand show 'The change-point report: per spec and runner type, each change point in the series of p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it finds'
        }
        &'loadgate;help;history;add'= {
        }
        &'loadgate;help;history;list'= {
        }
        &'loadgate;help;history;show'= {
        }
        &'loadgate;help;completions'= {
        }
        &'loadgate;help;man'= {
        }
        &'loadgate;help;version'= {
        }
        &'loadgate;help;help'= {
        }
    ]
    $completions[$command]
}
