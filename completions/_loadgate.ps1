
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'loadgate' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'loadgate'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'loadgate' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run a spec: start its service, apply the load, check the SLOs')
            [CompletionResult]::new('quick', 'quick', [CompletionResultType]::ParameterValue, 'A one-line run, with the flags of hey, oha and vastar: `loadgate quick -c 50 -z 10s URL`. It builds a spec from its flags (`--emit-spec` prints it) and runs it as `run` does; several URLs run one after another')
            [CompletionResult]::new('curl', 'curl', [CompletionResultType]::ParameterValue, 'A one-line run of a curl command (a browser''s "Copy as cURL"): `loadgate curl -c 10 -z 5s -- curl ''https://...'' -H ''...''`. Load flags as `quick`''s')
            [CompletionResult]::new('validate', 'validate', [CompletionResultType]::ParameterValue, 'Check a spec against the schema and its semantics, without running it')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print a JSON Schema: of the spec (default) or of the result file')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the built-in test target: responses shaped by query parameters')
            [CompletionResult]::new('compare', 'compare', [CompletionResultType]::ParameterValue, 'Compare a result with a baseline result; exit 0 pass, 1 SLO failed, 3 the current run was interrupted (not judged), 4 regression, 5 invalid measurement')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Render a result (compared with a baseline, with a trend over earlier results) as Markdown, HTML, JUnit XML or JSON')
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Merge the results of several shards of one run into one result, losslessly, print its summary and judge it as `run` does: exit 0 pass, 1 SLO failed, 5 invalid measurement')
            [CompletionResult]::new('ab', 'ab', [CompletionResultType]::ParameterValue, 'Load a baseline and a candidate at the same time with the spec''s load (duet) and judge each regression rule on the paired seconds; exit 0 pass, 1 SLO failed, 4 regression, 5 invalid measurement')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Send a stored result''s metrics to Prometheus (remote write) or an OpenTelemetry Collector (OTLP/HTTP), as `run --export` does after a run; exit 0 when every export succeeded, 3 otherwise')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'Keep results in a history folder (`add`), list them (`list`), and report the change points and drifts in their series (`show`: the nightly report). Exit 0 unless the input cannot be read (2) or written (3)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print the completion script of a shell (bash, zsh, fish, powershell, elvish) to stdout; docs/cli.md says where each shell reads it')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the manual page (roff) of loadgate or of one of its commands to stdout (`man -l -` reads it); the pages of every command are in docs/man/')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version (as `--version`), the commit it was built from, its target triple and compiler: what a bug report needs')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'loadgate;run' {
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write the result artifact (JSON) here; written whole or not at all. A folder that cannot take the file is refused before any load is sent (exit 2)')
            [CompletionResult]::new('--baseline', '--baseline', [CompletionResultType]::ParameterName, 'Compare the run with this baseline result and exit 4 on a regression; the file must exist')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'What the run prints: the text summary, one JSON line, or one CSV row')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Append the run''s output (in `--format`) to this file instead of stdout, which then shows the text summary; a CSV header is written only into a new or empty file')
            [CompletionResult]::new('--shard', '--shard', [CompletionResultType]::ParameterName, 'Run shard K of N (`K/N`, e.g. `2/4`): this process applies its share of the load (connections, arrival rate, max_in_flight and request counts split so that the shares add up to the spec''s; stages keep their timing) and records `K/N` in its result. SLOs are judged on the merged result (`loadgate merge`): a shard alone reports them and exits 0 unless it could not run. Not with `--baseline` (compare the merged result); `abort_on_fail` does not act on a shard (stopping every shard is out of scope)')
            [CompletionResult]::new('--start-at', '--start-at', [CompletionResultType]::ParameterName, 'Start the run (its warmup) at this time: RFC 3339 in UTC (`2026-11-24T10:00:00Z`) or `+30s` from now; it waits until then (Ctrl-C ends the wait). Every shard given the same time warms up and starts measuring on the same wall-clock second; a time already past shortens the warmup by the lateness, or is refused (exit 2) when past by more than the warmup')
            [CompletionResult]::new('--export', '--export', [CompletionResultType]::ParameterName, 'After the run, send its metrics (per-second series and whole-run summaries) to `prometheus=URL` (remote write 1.0, e.g. `http://prometheus:9090/api/v1/write`) or `otlp=URL` (OTLP/HTTP JSON, e.g. `http://collector:4318/v1/metrics`); repeatable. A failed export is reported on stderr and does not change the exit code; each ends within about 30 s (10 s per attempt, 3 attempts). Extra headers (authentication): `LOADGATE_EXPORT_HEADERS="Name=value,..."`. A bad KIND=URL is refused before any load is sent (exit 2)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress line on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress line on stderr')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'No colour in the summary (as the `NO_COLOR` environment variable; without either, colour is used when stdout is a terminal whose `TERM` is not `dumb`, or with `CLICOLOR_FORCE=1`, never with `CLICOLOR=0`)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'The summary''s long sections too: every percentile, the insight lines, the phases, the latency histogram, the upstream time, streamed bodies, the size and transfer rate, the client CPU and the stage table')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'The summary''s long sections too: every percentile, the insight lines, the phases, the latency histogram, the upstream time, streamed bodies, the size and transfer rate, the client CPU and the stage table')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'loadgate;quick' {
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'HTTP method (oha, hey `-m`)')
            [CompletionResult]::new('--method', '--method', [CompletionResultType]::ParameterName, 'HTTP method (oha, hey `-m`)')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Request body (hey, oha `-d`)')
            [CompletionResult]::new('--body', '--body', [CompletionResultType]::ParameterName, 'Request body (hey, oha `-d`)')
            [CompletionResult]::new('-D', '-D ', [CompletionResultType]::ParameterName, 'Request body from a file, relative to the current folder (hey `-D`)')
            [CompletionResult]::new('--body-file', '--body-file', [CompletionResultType]::ParameterName, 'Request body from a file, relative to the current folder (hey `-D`)')
            [CompletionResult]::new('-T', '-T ', [CompletionResultType]::ParameterName, 'Content-Type header (hey, oha `-T`)')
            [CompletionResult]::new('--content-type', '--content-type', [CompletionResultType]::ParameterName, 'Content-Type header (hey, oha `-T`)')
            [CompletionResult]::new('-H', '-H ', [CompletionResultType]::ParameterName, 'A request header, `Name: value` (repeatable)')
            [CompletionResult]::new('--header', '--header', [CompletionResultType]::ParameterName, 'A request header, `Name: value` (repeatable)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Accept header (hey, oha `-A`)')
            [CompletionResult]::new('--accept', '--accept', [CompletionResultType]::ParameterName, 'Accept header (hey, oha `-A`)')
            [CompletionResult]::new('-a', '-a', [CompletionResultType]::ParameterName, 'Basic authentication, `user:pass`: an `Authorization` header that no output shows')
            [CompletionResult]::new('--basic-auth', '--basic-auth', [CompletionResultType]::ParameterName, 'Basic authentication, `user:pass`: an `Authorization` header that no output shows')
            [CompletionResult]::new('--cacert', '--cacert', [CompletionResultType]::ParameterName, 'Trust the CA certificates of this PEM file, relative to the current folder')
            [CompletionResult]::new('--tls-ciphers', '--tls-ciphers', [CompletionResultType]::ParameterName, 'TLS cipher suites to offer, comma-separated rustls names (`TLS13_AES_128_GCM_SHA256,...`)')
            [CompletionResult]::new('--redirect', '--redirect', [CompletionResultType]::ParameterName, 'Follow at most N redirects on the same origin (default 10, as hey and oha)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Requests to measure (default 200 when no `-z`)')
            [CompletionResult]::new('--requests', '--requests', [CompletionResultType]::ParameterName, 'Requests to measure (default 200 when no `-z`)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Connections (default 50). With `-q`: the most requests in flight at once')
            [CompletionResult]::new('--connections', '--connections', [CompletionResultType]::ParameterName, 'Connections (default 50). With `-q`: the most requests in flight at once')
            [CompletionResult]::new('-z', '-z', [CompletionResultType]::ParameterName, 'How long to measure (`10s`, `1m`), instead of `-n`')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'How long to measure (`10s`, `1m`), instead of `-n`')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Requests per second over the whole run, on a schedule whatever the server does (the open model)')
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'Requests per second over the whole run, on a schedule whatever the server does (the open model)')
            [CompletionResult]::new('--rps', '--rps', [CompletionResultType]::ParameterName, 'Requests per second of each connection (loadgen-rs `--rps`; the closed model''s pacing)')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`')
            [CompletionResult]::new('--http2-parallel', '--http2-parallel', [CompletionResultType]::ParameterName, 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`')
            [CompletionResult]::new('--streams', '--streams', [CompletionResultType]::ParameterName, 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Request timeout (`10s`; a bare number is seconds, as hey''s `-t`). Default 10s')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Request timeout (`10s`; a bare number is seconds, as hey''s `-t`). Default 10s')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Connect timeout (`2s`; default: the request timeout)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads (rewrk, loadgen-rs `--threads`; default: the number of CPUs)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted')
            [CompletionResult]::new('--warmup', '--warmup', [CompletionResultType]::ParameterName, 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted')
            [CompletionResult]::new('--ramp-up', '--ramp-up', [CompletionResultType]::ParameterName, 'Ramp the load up from 0 over this long before measuring (not counted); needs `-z`')
            [CompletionResult]::new('--slow', '--slow', [CompletionResultType]::ParameterName, 'Count responses at least this slow (`1s`; plt `--slow`)')
            [CompletionResult]::new('--status-code', '--status-code', [CompletionResultType]::ParameterName, 'The expected status code; any other counts as an error (default: any 2xx)')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'Pause between URLs (`2s`)')
            [CompletionResult]::new('--rounds', '--rounds', [CompletionResultType]::ParameterName, 'Run each URL N times and summarise the rounds: mean and standard deviation of the RPS and of each percentile (rewrk `--rounds`)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'What each run prints: the text summary, one JSON line, or one CSV row')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Append each run''s output (in `--format`) to this file instead of stdout, which then shows the text summary; a CSV header is written only into a new or empty file')
            [CompletionResult]::new('--http2', '--http2', [CompletionResultType]::ParameterName, 'Speak HTTP/2 (over TLS by ALPN, over cleartext with prior knowledge)')
            [CompletionResult]::new('--http3', '--http3', [CompletionResultType]::ParameterName, 'Speak HTTP/3 over QUIC (`https://` URLs only)')
            [CompletionResult]::new('--http1.1', '--http1.1', [CompletionResultType]::ParameterName, 'Speak HTTP/1.1, over TLS too (ALPN offers `http/1.1` alone); the default for `http://`')
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'Accept any server certificate (test setups only; reports mark the run insecure)')
            [CompletionResult]::new('--insecure', '--insecure', [CompletionResultType]::ParameterName, 'Accept any server certificate (test setups only; reports mark the run insecure)')
            [CompletionResult]::new('--disable-compression', '--disable-compression', [CompletionResultType]::ParameterName, 'Do not offer `Accept-Encoding: gzip` (offered by default, as hey does)')
            [CompletionResult]::new('--disable-redirects', '--disable-redirects', [CompletionResultType]::ParameterName, 'Do not follow redirects (`--redirect 0`)')
            [CompletionResult]::new('--disable-keepalive', '--disable-keepalive', [CompletionResultType]::ParameterName, 'Open a new connection for every request')
            [CompletionResult]::new('--emit-spec', '--emit-spec', [CompletionResultType]::ParameterName, 'Print the equivalent spec (YAML) and exit without sending a request: the run as a CI gate (`loadgate run SPEC`). Several URLs: one document each, separated by `---`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'No colour in the summary (as the `NO_COLOR` environment variable; colour is only ever used when stdout is a terminal)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress line on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'loadgate;curl' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Requests to measure (default 200 when no `-z`)')
            [CompletionResult]::new('--requests', '--requests', [CompletionResultType]::ParameterName, 'Requests to measure (default 200 when no `-z`)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Connections (default 50). With `-q`: the most requests in flight at once')
            [CompletionResult]::new('--connections', '--connections', [CompletionResultType]::ParameterName, 'Connections (default 50). With `-q`: the most requests in flight at once')
            [CompletionResult]::new('-z', '-z', [CompletionResultType]::ParameterName, 'How long to measure (`10s`, `1m`), instead of `-n`')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'How long to measure (`10s`, `1m`), instead of `-n`')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Requests per second over the whole run, on a schedule whatever the server does (the open model)')
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'Requests per second over the whole run, on a schedule whatever the server does (the open model)')
            [CompletionResult]::new('--rps', '--rps', [CompletionResultType]::ParameterName, 'Requests per second of each connection (loadgen-rs `--rps`; the closed model''s pacing)')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`')
            [CompletionResult]::new('--http2-parallel', '--http2-parallel', [CompletionResultType]::ParameterName, 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`')
            [CompletionResult]::new('--streams', '--streams', [CompletionResultType]::ParameterName, 'HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Request timeout (`10s`; a bare number is seconds, as hey''s `-t`). Default 10s')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Request timeout (`10s`; a bare number is seconds, as hey''s `-t`). Default 10s')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Connect timeout (`2s`; default: the request timeout)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads (rewrk, loadgen-rs `--threads`; default: the number of CPUs)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted')
            [CompletionResult]::new('--warmup', '--warmup', [CompletionResultType]::ParameterName, 'Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests (fun-bomb `-w 100`); not counted')
            [CompletionResult]::new('--ramp-up', '--ramp-up', [CompletionResultType]::ParameterName, 'Ramp the load up from 0 over this long before measuring (not counted); needs `-z`')
            [CompletionResult]::new('--slow', '--slow', [CompletionResultType]::ParameterName, 'Count responses at least this slow (`1s`; plt `--slow`)')
            [CompletionResult]::new('--status-code', '--status-code', [CompletionResultType]::ParameterName, 'The expected status code; any other counts as an error (default: any 2xx)')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'Pause between URLs (`2s`)')
            [CompletionResult]::new('--rounds', '--rounds', [CompletionResultType]::ParameterName, 'Run each URL N times and summarise the rounds: mean and standard deviation of the RPS and of each percentile (rewrk `--rounds`)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'What each run prints: the text summary, one JSON line, or one CSV row')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Append each run''s output (in `--format`) to this file instead of stdout, which then shows the text summary; a CSV header is written only into a new or empty file')
            [CompletionResult]::new('--disable-keepalive', '--disable-keepalive', [CompletionResultType]::ParameterName, 'Open a new connection for every request')
            [CompletionResult]::new('--emit-spec', '--emit-spec', [CompletionResultType]::ParameterName, 'Print the equivalent spec (YAML) and exit without sending a request: the run as a CI gate (`loadgate run SPEC`). Several URLs: one document each, separated by `---`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Before the load, send one request and print the response: status line, headers, the first bytes of the body, and the address and protocol it went to')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'No colour in the summary (as the `NO_COLOR` environment variable; colour is only ever used when stdout is a terminal)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress line on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'loadgate;validate' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'loadgate;schema' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'loadgate;serve' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address to listen on (loopback by default)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads (default: the number of CPUs)')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Speak TLS (HTTP/1.1 and HTTP/2 by ALPN) with this certificate chain (PEM)')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key of `--tls-cert` (PEM)')
            [CompletionResult]::new('--tls-client-ca', '--tls-client-ca', [CompletionResultType]::ParameterName, 'Require client certificates signed by a CA in this PEM file (mTLS)')
            [CompletionResult]::new('--h3', '--h3', [CompletionResultType]::ParameterName, 'Also answer HTTP/3 (QUIC, UDP) on the same port number; needs --tls-cert and --tls-key')
            [CompletionResult]::new('--grpc', '--grpc', [CompletionResultType]::ParameterName, 'Also answer gRPC: the `loadgate.echo.v1.Echo` service of examples/echo.proto (h2c over cleartext, HTTP/2 by ALPN over TLS)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'loadgate;compare' {
            [CompletionResult]::new('--baseline-history', '--baseline-history', [CompletionResultType]::ParameterName, 'Earlier results (files, or folders of `.json` results such as a `loadgate history` folder; repeatable): each rule is judged against the level of those of this spec and runner type (and the baseline''s branch) since their last change point; with fewer than 5 of them, it is inconclusive')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the output here instead of stdout')
            [CompletionResult]::new('--templates', '--templates', [CompletionResultType]::ParameterName, 'A folder whose templates (report.md, report.html, junit.xml) replace the built-in ones; it must exist and hold at least one of them')
            [CompletionResult]::new('--spec', '--spec', [CompletionResultType]::ParameterName, 'The spec file the results came from, as the repository names it (e.g. `perf/api.loadgate.yaml`): the JUnit report gives it as each test case''s `file`, so test-report actions annotate the spec. When it is the file the run was made from (its SHA-256 is the result''s `spec.hash`), the JSON verdict gives each SLO and rule its `line` in it')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'loadgate;report' {
            [CompletionResult]::new('--dashboard', '--dashboard', [CompletionResultType]::ParameterName, 'Instead of a report on results: the dashboard of the history in this folder (a `loadgate history` folder, or any folder of result files), one self-contained HTML page: per spec and runner type, each scope''s p50, p95, p99, throughput and error rate over the results, change points marked, each point linking to its commit')
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'With `--dashboard`: only the results of this branch (as they record it)')
            [CompletionResult]::new('--baseline', '--baseline', [CompletionResultType]::ParameterName, 'Compare the latest result with this baseline result')
            [CompletionResult]::new('--baseline-history', '--baseline-history', [CompletionResultType]::ParameterName, 'With `--baseline`: earlier results (files or folders; repeatable) whose level each rule is judged against, as `compare --baseline-history`')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the report here instead of stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the report here instead of stdout')
            [CompletionResult]::new('--templates', '--templates', [CompletionResultType]::ParameterName, 'A folder whose templates (report.md, report.html, junit.xml, dashboard.html) replace the built-in ones; it must exist and hold at least one of them')
            [CompletionResult]::new('--spec', '--spec', [CompletionResultType]::ParameterName, 'The spec file the results came from, as the repository names it (e.g. `perf/api.loadgate.yaml`): the JUnit report gives it as each test case''s `file`, so test-report actions annotate the spec. When it is the file the run was made from (its SHA-256 is the result''s `spec.hash`), the JSON verdict gives each SLO and rule its `line` in it. With `--dashboard`: the name of the one spec to show (the spec''s `name`)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'How many runs the trend shows, the latest included')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'loadgate;merge' {
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write the merged result here')
            [CompletionResult]::new('--allow-missing', '--allow-missing', [CompletionResultType]::ParameterName, 'Merge even when shards of the run are missing (`--shard K/N` results whose K do not cover 1..N); the merged result is then marked partial and lists the missing shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'loadgate;ab' {
            [CompletionResult]::new('--baseline-url', '--baseline-url', [CompletionResultType]::ParameterName, 'The baseline''s `defaults.base_url`, replacing the spec''s')
            [CompletionResult]::new('--candidate-url', '--candidate-url', [CompletionResultType]::ParameterName, 'The candidate''s `defaults.base_url`, replacing the spec''s')
            [CompletionResult]::new('--baseline', '--baseline', [CompletionResultType]::ParameterName, 'A value of `${NAME}` for the baseline, before the environment''s (repeatable)')
            [CompletionResult]::new('--candidate', '--candidate', [CompletionResultType]::ParameterName, 'A value of `${NAME}` for the candidate, before the environment''s (repeatable)')
            [CompletionResult]::new('--epoch', '--epoch', [CompletionResultType]::ParameterName, 'Length of the epochs that are paired: a whole fraction of a second (1s, 500ms, 250ms, 200ms, 100ms). Shorter epochs give more pairs, a narrower interval, as long as each holds enough responses for the rules'' percentiles. Default: the spec''s `ab.epoch`, else 250ms in duet mode, 1s in alternating mode (which takes whole seconds)')
            [CompletionResult]::new('--mode', '--mode', [CompletionResultType]::ParameterName, 'How the sides are loaded: `duet`, both at the same time on one schedule; or `alternating`, one epoch at a time in ABBA blocks with a random start. Default: the spec''s `ab.mode`, else `duet`')
            [CompletionResult]::new('--sub-runs', '--sub-runs', [CompletionResultType]::ParameterName, 'Sub-runs per invocation, an even number, at least 4: the spec''s measured duration is split among them, and the sides swap positions from one to the next (which side starts first and keeps the schedule); the paired verdict is taken across them. Default: the spec''s `ab.sub_runs`, else 8, fewer (never below 4) when a sub-run would measure under 0.5 s')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write both sides'' results and their epochs (JSON) here, whole or not at all; `loadgate report FILE` renders it. A folder that cannot take the file is refused before any load is sent (exit 2)')
            [CompletionResult]::new('--aa', '--aa', [CompletionResultType]::ParameterName, 'A/A calibration: the candidate is the baseline (its URL, values and service); prints per rule the noise of this machine at this run length (the minimum detectable effect) and the run length that would see the rule''s allowed change')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress line on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress line on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'loadgate;export' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Where to send it: `prometheus=URL` or `otlp=URL`, as `run --export`; repeatable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'loadgate;history' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a result file to the history folder DIR and print the stored file''s path (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the results of a history (or of any folders and files of results), in time order: time, spec, branch, commit, runner type, file')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'The change-point report: per spec and runner type, each change point in the series of p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it finds')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'loadgate;history;add' {
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'The measured code''s branch, instead of the one the result records')
            [CompletionResult]::new('--commit', '--commit', [CompletionResultType]::ParameterName, 'The measured code''s commit (full SHA), instead of the one the result records')
            [CompletionResult]::new('--commit-url', '--commit-url', [CompletionResultType]::ParameterName, 'A web page of the commit, instead of the one the result records')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'loadgate;history;list' {
            [CompletionResult]::new('--spec', '--spec', [CompletionResultType]::ParameterName, 'Only the results of the spec of this name')
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'Only the results of this branch')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'loadgate;history;show' {
            [CompletionResult]::new('--spec', '--spec', [CompletionResultType]::ParameterName, 'Only the results of the spec of this name')
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'Only the results of this branch')
            [CompletionResult]::new('--recent', '--recent', [CompletionResultType]::ParameterName, 'A change point is new when it is within the last N results of its spec and runner type')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the report here instead of stdout (whole or not at all)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the report here instead of stdout (whole or not at all)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'loadgate;history;help' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a result file to the history folder DIR and print the stored file''s path (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the results of a history (or of any folders and files of results), in time order: time, spec, branch, commit, runner type, file')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'The change-point report: per spec and runner type, each change point in the series of p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it finds')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'loadgate;history;help;add' {
            break
        }
        'loadgate;history;help;list' {
            break
        }
        'loadgate;history;help;show' {
            break
        }
        'loadgate;history;help;help' {
            break
        }
        'loadgate;completions' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'loadgate;man' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'loadgate;version' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'loadgate;help' {
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run a spec: start its service, apply the load, check the SLOs')
            [CompletionResult]::new('quick', 'quick', [CompletionResultType]::ParameterValue, 'A one-line run, with the flags of hey, oha and vastar: `loadgate quick -c 50 -z 10s URL`. It builds a spec from its flags (`--emit-spec` prints it) and runs it as `run` does; several URLs run one after another')
            [CompletionResult]::new('curl', 'curl', [CompletionResultType]::ParameterValue, 'A one-line run of a curl command (a browser''s "Copy as cURL"): `loadgate curl -c 10 -z 5s -- curl ''https://...'' -H ''...''`. Load flags as `quick`''s')
            [CompletionResult]::new('validate', 'validate', [CompletionResultType]::ParameterValue, 'Check a spec against the schema and its semantics, without running it')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print a JSON Schema: of the spec (default) or of the result file')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the built-in test target: responses shaped by query parameters')
            [CompletionResult]::new('compare', 'compare', [CompletionResultType]::ParameterValue, 'Compare a result with a baseline result; exit 0 pass, 1 SLO failed, 3 the current run was interrupted (not judged), 4 regression, 5 invalid measurement')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Render a result (compared with a baseline, with a trend over earlier results) as Markdown, HTML, JUnit XML or JSON')
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Merge the results of several shards of one run into one result, losslessly, print its summary and judge it as `run` does: exit 0 pass, 1 SLO failed, 5 invalid measurement')
            [CompletionResult]::new('ab', 'ab', [CompletionResultType]::ParameterValue, 'Load a baseline and a candidate at the same time with the spec''s load (duet) and judge each regression rule on the paired seconds; exit 0 pass, 1 SLO failed, 4 regression, 5 invalid measurement')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Send a stored result''s metrics to Prometheus (remote write) or an OpenTelemetry Collector (OTLP/HTTP), as `run --export` does after a run; exit 0 when every export succeeded, 3 otherwise')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'Keep results in a history folder (`add`), list them (`list`), and report the change points and drifts in their series (`show`: the nightly report). Exit 0 unless the input cannot be read (2) or written (3)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print the completion script of a shell (bash, zsh, fish, powershell, elvish) to stdout; docs/cli.md says where each shell reads it')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the manual page (roff) of loadgate or of one of its commands to stdout (`man -l -` reads it); the pages of every command are in docs/man/')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version (as `--version`), the commit it was built from, its target triple and compiler: what a bug report needs')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'loadgate;help;run' {
            break
        }
        'loadgate;help;quick' {
            break
        }
        'loadgate;help;curl' {
            break
        }
        'loadgate;help;validate' {
            break
        }
        'loadgate;help;schema' {
            break
        }
        'loadgate;help;serve' {
            break
        }
        'loadgate;help;compare' {
            break
        }
        'loadgate;help;report' {
            break
        }
        'loadgate;help;merge' {
            break
        }
        'loadgate;help;ab' {
            break
        }
        'loadgate;help;export' {
            break
        }
        'loadgate;help;history' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a result file to the history folder DIR and print the stored file''s path (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the results of a history (or of any folders and files of results), in time order: time, spec, branch, commit, runner type, file')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'The change-point report: per spec and runner type, each change point in the series of p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it finds')
            break
        }
        'loadgate;help;history;add' {
            break
        }
        'loadgate;help;history;list' {
            break
        }
        'loadgate;help;history;show' {
            break
        }
        'loadgate;help;completions' {
            break
        }
        'loadgate;help;man' {
            break
        }
        'loadgate;help;version' {
            break
        }
        'loadgate;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
