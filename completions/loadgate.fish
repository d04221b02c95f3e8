# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_loadgate_global_optspecs
    string join \n h/help V/version
end

function __fish_loadgate_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_loadgate_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_loadgate_using_subcommand
    set -l cmd (__fish_loadgate_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c loadgate -n "__fish_loadgate_needs_command" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_needs_command" -s V -l version -d 'Print version'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "run" -d 'Run a spec: start its service, apply the load, check the SLOs'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "quick" -d 'A one-line run, with the flags of hey, oha and vastar: `loadgate quick -c 50 -z 10s URL`. It builds a spec from its flags (`--emit-spec` prints it) and runs it as `run` does; several URLs run one after another'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "curl" -d 'A one-line run of a curl command (a browser\'s "Copy as cURL"): `loadgate curl -c 10 -z 5s -- curl \'https://...\' -H \'...\'`. Load flags as `quick`\'s'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "validate" -d 'Check a spec against the schema and its semantics, without running it'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "schema" -d 'Print a JSON Schema: of the spec (default) or of the result file'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "serve" -d 'Serve the built-in test target: responses shaped by query parameters'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "compare" -d 'Compare a result with a baseline result; exit 0 pass, 1 SLO failed, 3 the current run was interrupted (not judged), 4 regression, 5 invalid measurement'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "report" -d 'Render a result (compared with a baseline, with a trend over earlier results) as Markdown, HTML, JUnit XML or JSON'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "merge" -d 'Merge the results of several shards of one run into one result, losslessly, print its summary and judge it as `run` does: exit 0 pass, 1 SLO failed, 5 invalid measurement'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "ab" -d 'Load a baseline and a candidate at the same time with the spec\'s load (duet) and judge each regression rule on the paired seconds; exit 0 pass, 1 SLO failed, 4 regression, 5 invalid measurement'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "export" -d 'Send a stored result\'s metrics to Prometheus (remote write) or an OpenTelemetry Collector (OTLP/HTTP), as `run --export` does after a run; exit 0 when every export succeeded, 3 otherwise'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "history" -d 'Keep results in a history folder (`add`), list them (`list`), and report the change points and drifts in their series (`show`: the nightly report). Exit 0 unless the input cannot be read (2) or written (3)'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "completions" -d 'Print the completion script of a shell (bash, zsh, fish, powershell, elvish) to stdout; docs/cli.md says where each shell reads it'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "man" -d 'Print the manual page (roff) of loadgate or of one of its commands to stdout (`man -l -` reads it); the pages of every command are in docs/man/'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "version" -d 'Print the version (as `--version`), the commit it was built from, its target triple and compiler: what a bug report needs'
complete -c loadgate -n "__fish_loadgate_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -l out -d 'Write the result artifact (JSON) here; written whole or not at all. A folder that cannot take the file is refused before any load is sent (exit 2)' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -l baseline -d 'Compare the run with this baseline result and exit 4 on a regression; the file must exist' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -l format -d 'What the run prints: the text summary, one JSON line, or one CSV row' -r -f -a "text\t'The text summary'
jsonl\t'One JSON object per line'
csv\t'One CSV row per run, under a header'"
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -l output -d 'Append the run\'s output (in `--format`) to this file instead of stdout, which then shows the text summary; a CSV header is written only into a new or empty file' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -l shard -d 'Run shard K of N (`K/N`, e.g. `2/4`): this process applies its share of the load (connections, arrival rate, max_in_flight and request counts split so that the shares add up to the spec\'s; stages keep their timing) and records `K/N` in its result. SLOs are judged on the merged result (`loadgate merge`): a shard alone reports them and exits 0 unless it could not run. Not with `--baseline` (compare the merged result); `abort_on_fail` does not act on a shard (stopping every shard is out of scope)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -l start-at -d 'Start the run (its warmup) at this time: RFC 3339 in UTC (`2026-11-24T10:00:00Z`) or `+30s` from now; it waits until then (Ctrl-C ends the wait). Every shard given the same time warms up and starts measuring on the same wall-clock second; a time already past shortens the warmup by the lateness, or is refused (exit 2) when past by more than the warmup' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -l export -d 'After the run, send its metrics (per-second series and whole-run summaries) to `prometheus=URL` (remote write 1.0, e.g. `http://prometheus:9090/api/v1/write`) or `otlp=URL` (OTLP/HTTP JSON, e.g. `http://collector:4318/v1/metrics`); repeatable. A failed export is reported on stderr and does not change the exit code; each ends within about 30 s (10 s per attempt, 3 attempts). Extra headers (authentication): `LOADGATE_EXPORT_HEADERS="Name=value,..."`. A bad KIND=URL is refused before any load is sent (exit 2)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -s q -l quiet -d 'No progress line on stderr'
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -l no-color -d 'No colour in the summary (as the `NO_COLOR` environment variable; without either, colour is used when stdout is a terminal whose `TERM` is not `dumb`, or with `CLICOLOR_FORCE=1`, never with `CLICOLOR=0`)'
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -s v -l verbose -d 'The summary\'s long sections too: every percentile, the insight lines, the phases, the latency histogram, the upstream time, streamed bodies, the size and transfer rate, the client CPU and the stage table'
complete -c loadgate -n "__fish_loadgate_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s m -l method -d 'HTTP method (oha, hey `-m`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s d -l body -d 'Request body (hey, oha `-d`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s D -l body-file -d 'Request body from a file, relative to the current folder (hey `-D`)' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s T -l content-type -d 'Content-Type header (hey, oha `-T`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s H -l header -d 'A request header, `Name: value` (repeatable)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s A -l accept -d 'Accept header (hey, oha `-A`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s a -l basic-auth -d 'Basic authentication, `user:pass`: an `Authorization` header that no output shows' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l cacert -d 'Trust the CA certificates of this PEM file, relative to the current folder' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l tls-ciphers -d 'TLS cipher suites to offer, comma-separated rustls names (`TLS13_AES_128_GCM_SHA256,...`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l redirect -d 'Follow at most N redirects on the same origin (default 10, as hey and oha)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s n -l requests -d 'Requests to measure (default 200 when no `-z`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s c -l connections -d 'Connections (default 50). With `-q`: the most requests in flight at once' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s z -l duration -d 'How long to measure (`10s`, `1m`), instead of `-n`' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s q -l rate -d 'Requests per second over the whole run, on a schedule whatever the server does (the open model)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l rps -d 'Requests per second of each connection (loadgen-rs `--rps`; the closed model\'s pacing)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s p -l http2-parallel -l streams -d 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s t -l timeout -d 'Request timeout (`10s`; a bare number is seconds, as hey\'s `-t`). Default 10s' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l connect-timeout -d 'Connect timeout (`2s`; default: the request timeout)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l threads -d 'Worker threads (rewrk, loadgen-rs `--threads`; default: the number of CPUs)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s w -l warmup -d 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l ramp-up -d 'Ramp the load up from 0 over this long before measuring (not counted); needs `-z`' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l slow -d 'Count responses at least this slow (`1s`; plt `--slow`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l status-code -d 'The expected status code; any other counts as an error (default: any 2xx)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l delay -d 'Pause between URLs (`2s`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l rounds -d 'Run each URL N times and summarise the rounds: mean and standard deviation of the RPS and of each percentile (rewrk `--rounds`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l format -d 'What each run prints: the text summary, one JSON line, or one CSV row' -r -f -a "text\t'The text summary'
jsonl\t'One JSON object per line'
csv\t'One CSV row per run, under a header'"
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l output -d 'Append each run\'s output (in `--format`) to this file instead of stdout, which then shows the text summary; a CSV header is written only into a new or empty file' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l http2 -d 'Speak HTTP/2 (over TLS by ALPN, over cleartext with prior knowledge)'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l http3 -d 'Speak HTTP/3 over QUIC (`https://` URLs only)'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l http1.1 -d 'Speak HTTP/1.1, over TLS too (ALPN offers `http/1.1` alone); the default for `http://`'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s k -l insecure -d 'Accept any server certificate (test setups only; reports mark the run insecure)'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l disable-compression -d 'Do not offer `Accept-Encoding: gzip` (offered by default, as hey does)'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l disable-redirects -d 'Do not follow redirects (`--redirect 0`)'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l disable-keepalive -d 'Open a new connection for every request'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l emit-spec -d 'Print the equivalent spec (YAML) and exit without sending a request: the run as a CI gate (`loadgate run SPEC`). Several URLs: one document each, separated by `---`'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s v -l verbose -d 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l no-color -d 'No colour in the summary (as the `NO_COLOR` environment variable; colour is only ever used when stdout is a terminal)'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -l quiet -d 'No progress line on stderr'
complete -c loadgate -n "__fish_loadgate_using_subcommand quick" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -s n -l requests -d 'Requests to measure (default 200 when no `-z`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -s c -l connections -d 'Connections (default 50). With `-q`: the most requests in flight at once' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -s z -l duration -d 'How long to measure (`10s`, `1m`), instead of `-n`' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -s q -l rate -d 'Requests per second over the whole run, on a schedule whatever the server does (the open model)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l rps -d 'Requests per second of each connection (loadgen-rs `--rps`; the closed model\'s pacing)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -s p -l http2-parallel -l streams -d 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -s t -l timeout -d 'Request timeout (`10s`; a bare number is seconds, as hey\'s `-t`). Default 10s' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l connect-timeout -d 'Connect timeout (`2s`; default: the request timeout)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l threads -d 'Worker threads (rewrk, loadgen-rs `--threads`; default: the number of CPUs)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -s w -l warmup -d 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l ramp-up -d 'Ramp the load up from 0 over this long before measuring (not counted); needs `-z`' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l slow -d 'Count responses at least this slow (`1s`; plt `--slow`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l status-code -d 'The expected status code; any other counts as an error (default: any 2xx)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l delay -d 'Pause between URLs (`2s`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l rounds -d 'Run each URL N times and summarise the rounds: mean and standard deviation of the RPS and of each percentile (rewrk `--rounds`)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l format -d 'What each run prints: the text summary, one JSON line, or one CSV row' -r -f -a "text\t'The text summary'
jsonl\t'One JSON object per line'
csv\t'One CSV row per run, under a header'"
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l output -d 'Append each run\'s output (in `--format`) to this file instead of stdout, which then shows the text summary; a CSV header is written only into a new or empty file' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l disable-keepalive -d 'Open a new connection for every request'
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l emit-spec -d 'Print the equivalent spec (YAML) and exit without sending a request: the run as a CI gate (`loadgate run SPEC`). Several URLs: one document each, separated by `---`'
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -s v -l verbose -d 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to'
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l no-color -d 'No colour in the summary (as the `NO_COLOR` environment variable; colour is only ever used when stdout is a terminal)'
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -l quiet -d 'No progress line on stderr'
complete -c loadgate -n "__fish_loadgate_using_subcommand curl" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c loadgate -n "__fish_loadgate_using_subcommand validate" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand schema" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c loadgate -n "__fish_loadgate_using_subcommand serve" -l listen -d 'Address to listen on (loopback by default)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand serve" -l threads -d 'Worker threads (default: the number of CPUs)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand serve" -l tls-cert -d 'Speak TLS (HTTP/1.1 and HTTP/2 by ALPN) with this certificate chain (PEM)' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand serve" -l tls-key -d 'The private key of `--tls-cert` (PEM)' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand serve" -l tls-client-ca -d 'Require client certificates signed by a CA in this PEM file (mTLS)' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand serve" -l h3 -d 'Also answer HTTP/3 (QUIC, UDP) on the same port number; needs --tls-cert and --tls-key'
complete -c loadgate -n "__fish_loadgate_using_subcommand serve" -l grpc -d 'Also answer gRPC: the `loadgate.echo.v1.Echo` service of examples/echo.proto (h2c over cleartext, HTTP/2 by ALPN over TLS)'
complete -c loadgate -n "__fish_loadgate_using_subcommand serve" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand compare" -l baseline-history -d 'Earlier results (files, or folders of `.json` results such as a `loadgate history` folder; repeatable): each rule is judged against the level of those of this spec and runner type (and the baseline\'s branch) since their last change point; with fewer than 5 of them, it is inconclusive' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand compare" -l format -d 'Output format' -r -f -a "text\t'Plain text for a terminal'
md\t'Markdown for a pull-request comment or a job summary (under 65,536 characters)'
html\t'One self-contained HTML file with charts'
junit\t'JUnit XML: each SLO and regression rule a test case'
json\t'The JSON verdict (`loadgate schema verdict`)'"
complete -c loadgate -n "__fish_loadgate_using_subcommand compare" -l output -d 'Write the output here instead of stdout' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand compare" -l templates -d 'A folder whose templates (report.md, report.html, junit.xml) replace the built-in ones; it must exist and hold at least one of them' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand compare" -l spec -d 'The spec file the results came from, as the repository names it (e.g. `perf/api.loadgate.yaml`): the JUnit report gives it as each test case\'s `file`, so test-report actions annotate the spec. When it is the file the run was made from (its SHA-256 is the result\'s `spec.hash`), the JSON verdict gives each SLO and rule its `line` in it' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand compare" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -l dashboard -d 'Instead of a report on results: the dashboard of the history in this folder (a `loadgate history` folder, or any folder of result files), one self-contained HTML page: per spec and runner type, each scope\'s p50, p95, p99, throughput and error rate over the results, change points marked, each point linking to its commit' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -l branch -d 'With `--dashboard`: only the results of this branch (as they record it)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -l baseline -d 'Compare the latest result with this baseline result' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -l baseline-history -d 'With `--baseline`: earlier results (files or folders; repeatable) whose level each rule is judged against, as `compare --baseline-history`' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -l format -d 'Output format' -r -f -a "text\t'Plain text for a terminal'
md\t'Markdown for a pull-request comment or a job summary (under 65,536 characters)'
html\t'One self-contained HTML file with charts'
junit\t'JUnit XML: each SLO and regression rule a test case'
json\t'The JSON verdict (`loadgate schema verdict`)'"
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -s o -l output -d 'Write the report here instead of stdout' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -l templates -d 'A folder whose templates (report.md, report.html, junit.xml, dashboard.html) replace the built-in ones; it must exist and hold at least one of them' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -l spec -d 'The spec file the results came from, as the repository names it (e.g. `perf/api.loadgate.yaml`): the JUnit report gives it as each test case\'s `file`, so test-report actions annotate the spec. When it is the file the run was made from (its SHA-256 is the result\'s `spec.hash`), the JSON verdict gives each SLO and rule its `line` in it. With `--dashboard`: the name of the one spec to show (the spec\'s `name`)' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -l window -d 'How many runs the trend shows, the latest included' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c loadgate -n "__fish_loadgate_using_subcommand merge" -l out -d 'Write the merged result here' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand merge" -l allow-missing -d 'Merge even when shards of the run are missing (`--shard K/N` results whose K do not cover 1..N); the merged result is then marked partial and lists the missing shards'
complete -c loadgate -n "__fish_loadgate_using_subcommand merge" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -l baseline-url -d 'The baseline\'s `defaults.base_url`, replacing the spec\'s' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -l candidate-url -d 'The candidate\'s `defaults.base_url`, replacing the spec\'s' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -l baseline -d 'A value of `${NAME}` for the baseline, before the environment\'s (repeatable)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -l candidate -d 'A value of `${NAME}` for the candidate, before the environment\'s (repeatable)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -l epoch -d 'Length of the epochs that are paired: a whole fraction of a second (1s, 500ms, 250ms, 200ms, 100ms). Shorter epochs give more pairs, a narrower interval, as long as each holds enough responses for the rules\' percentiles. Default: the spec\'s `ab.epoch`, else 250ms in duet mode, 1s in alternating mode (which takes whole seconds)' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -l mode -d 'How the sides are loaded: `duet`, both at the same time on one schedule; or `alternating`, one epoch at a time in ABBA blocks with a random start. Default: the spec\'s `ab.mode`, else `duet`' -r -f -a "duet\t'Both sides at the same time, on one schedule (Bulej et al., Duet Benchmarking, ICPE 2020)'
alternating\t'One side at a time, epoch by epoch, in ABBA blocks with a random start'"
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -l sub-runs -d 'Sub-runs per invocation, an even number, at least 4: the spec\'s measured duration is split among them, and the sides swap positions from one to the next (which side starts first and keeps the schedule); the paired verdict is taken across them. Default: the spec\'s `ab.sub_runs`, else 8, fewer (never below 4) when a sub-run would measure under 0.5 s' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -l out -d 'Write both sides\' results and their epochs (JSON) here, whole or not at all; `loadgate report FILE` renders it. A folder that cannot take the file is refused before any load is sent (exit 2)' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -l aa -d 'A/A calibration: the candidate is the baseline (its URL, values and service); prints per rule the noise of this machine at this run length (the minimum detectable effect) and the run length that would see the rule\'s allowed change'
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -s q -l quiet -d 'No progress line on stderr'
complete -c loadgate -n "__fish_loadgate_using_subcommand ab" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c loadgate -n "__fish_loadgate_using_subcommand export" -l to -d 'Where to send it: `prometheus=URL` or `otlp=URL`, as `run --export`; repeatable' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand export" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and not __fish_seen_subcommand_from add list show help" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and not __fish_seen_subcommand_from add list show help" -f -a "add" -d 'Add a result file to the history folder DIR and print the stored file\'s path (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and not __fish_seen_subcommand_from add list show help" -f -a "list" -d 'List the results of a history (or of any folders and files of results), in time order: time, spec, branch, commit, runner type, file'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and not __fish_seen_subcommand_from add list show help" -f -a "show" -d 'The change-point report: per spec and runner type, each change point in the series of p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it finds'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and not __fish_seen_subcommand_from add list show help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from add" -l branch -d 'The measured code\'s branch, instead of the one the result records' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from add" -l commit -d 'The measured code\'s commit (full SHA), instead of the one the result records' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from add" -l commit-url -d 'A web page of the commit, instead of the one the result records' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from list" -l spec -d 'Only the results of the spec of this name' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from list" -l branch -d 'Only the results of this branch' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from show" -l spec -d 'Only the results of the spec of this name' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from show" -l branch -d 'Only the results of this branch' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from show" -l recent -d 'A change point is new when it is within the last N results of its spec and runner type' -r
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from show" -l format -d 'Output format' -r -f -a "text\t'Plain text for a terminal'
markdown\t'Markdown for a job summary or an issue'
json\t'The report\'s data as JSON (docs/history.md describes its fields)'"
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from show" -s o -l output -d 'Write the report here instead of stdout (whole or not at all)' -r -F
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a result file to the history folder DIR and print the stored file\'s path (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the results of a history (or of any folders and files of results), in time order: time, spec, branch, commit, runner type, file'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "show" -d 'The change-point report: per spec and runner type, each change point in the series of p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it finds'
complete -c loadgate -n "__fish_loadgate_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c loadgate -n "__fish_loadgate_using_subcommand completions" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand man" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand version" -s h -l help -d 'Print help'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "run" -d 'Run a spec: start its service, apply the load, check the SLOs'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "quick" -d 'A one-line run, with the flags of hey, oha and vastar: `loadgate quick -c 50 -z 10s URL`. It builds a spec from its flags (`--emit-spec` prints it) and runs it as `run` does; several URLs run one after another'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "curl" -d 'A one-line run of a curl command (a browser\'s "Copy as cURL"): `loadgate curl -c 10 -z 5s -- curl \'https://...\' -H \'...\'`. Load flags as `quick`\'s'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "validate" -d 'Check a spec against the schema and its semantics, without running it'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "schema" -d 'Print a JSON Schema: of the spec (default) or of the result file'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "serve" -d 'Serve the built-in test target: responses shaped by query parameters'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "compare" -d 'Compare a result with a baseline result; exit 0 pass, 1 SLO failed, 3 the current run was interrupted (not judged), 4 regression, 5 invalid measurement'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "report" -d 'Render a result (compared with a baseline, with a trend over earlier results) as Markdown, HTML, JUnit XML or JSON'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "merge" -d 'Merge the results of several shards of one run into one result, losslessly, print its summary and judge it as `run` does: exit 0 pass, 1 SLO failed, 5 invalid measurement'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "ab" -d 'Load a baseline and a candidate at the same time with the spec\'s load (duet) and judge each regression rule on the paired seconds; exit 0 pass, 1 SLO failed, 4 regression, 5 invalid measurement'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "export" -d 'Send a stored result\'s metrics to Prometheus (remote write) or an OpenTelemetry Collector (OTLP/HTTP), as `run --export` does after a run; exit 0 when every export succeeded, 3 otherwise'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "history" -d 'Keep results in a history folder (`add`), list them (`list`), and report the change points and drifts in their series (`show`: the nightly report). Exit 0 unless the input cannot be read (2) or written (3)'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "completions" -d 'Print the completion script of a shell (bash, zsh, fish, powershell, elvish) to stdout; docs/cli.md says where each shell reads it'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "man" -d 'Print the manual page (roff) of loadgate or of one of its commands to stdout (`man -l -` reads it); the pages of every command are in docs/man/'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "version" -d 'Print the version (as `--version`), the commit it was built from, its target triple and compiler: what a bug report needs'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and not __fish_seen_subcommand_from run quick curl validate schema serve compare report merge ab export history completions man version help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "add" -d 'Add a result file to the history folder DIR and print the stored file\'s path (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "list" -d 'List the results of a history (or of any folders and files of results), in time order: time, spec, branch, commit, runner type, file'
complete -c loadgate -n "__fish_loadgate_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "show" -d 'The change-point report: per spec and runner type, each change point in the series of p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it finds'
