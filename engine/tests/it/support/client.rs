//! A minimal raw HTTP/1.1 client over a blocking [`TcpStream`], written independently of the
//! engine so that it can check both our servers and the engine's parser. Every read and write has
//! a timeout of [`IO_TIMEOUT`], so no test can hang on it.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Read and write timeout of an [`HttpConn`] (5 s).
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// One HTTP/1.x connection. Keeps its read buffer across responses, so that several responses
/// (keep-alive, pipelining) can be read from it in turn.
#[derive(Debug)]
pub struct HttpConn {
    reader: BufReader<TcpStream>,
    addr: SocketAddr,
}

/// A parsed response. Header names are lower-cased; values are trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawResponse {
    /// e.g. `HTTP/1.1`.
    pub version: String,
    /// e.g. 200.
    pub status: u16,
    /// In the order received, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// Trailer fields of a chunked body, names lower-cased.
    pub trailers: Vec<(String, String)>,
}

impl RawResponse {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of header `name` (case-insensitive), in order.
    pub fn header_all(&self, name: &str) -> Vec<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

impl HttpConn {
    /// Connects to `addr` with [`IO_TIMEOUT`] for connecting, reading and writing.
    pub fn connect(addr: SocketAddr) -> io::Result<HttpConn> {
        let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
        stream.set_read_timeout(Some(IO_TIMEOUT))?;
        stream.set_write_timeout(Some(IO_TIMEOUT))?;
        stream.set_nodelay(true)?;
        Ok(HttpConn {
            reader: BufReader::new(stream),
            addr,
        })
    }

    /// Writes `bytes` as they are.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.reader.get_mut().write_all(bytes)
    }

    /// Sends `METHOD target HTTP/1.1` with a `Host` header and no body, and reads the response.
    pub fn request(&mut self, method: &str, target: &str) -> io::Result<RawResponse> {
        let request = format!("{method} {target} HTTP/1.1\r\nHost: {}\r\n\r\n", self.addr);
        self.send(request.as_bytes())?;
        self.read_response(method == "HEAD")
    }

    /// `GET target`, then reads the response.
    pub fn get(&mut self, target: &str) -> io::Result<RawResponse> {
        self.request("GET", target)
    }

    /// Reads one response. `head` says the request was `HEAD` (no body follows). The body is
    /// delimited by `Transfer-Encoding: chunked`, else `Content-Length`, else the end of the
    /// connection.
    pub fn read_response(&mut self, head: bool) -> io::Result<RawResponse> {
        let status_line = self.read_line()?;
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default().to_owned();
        let status = parts
            .next()
            .and_then(|s| s.parse::<u16>().ok())
            .filter(|_| version.starts_with("HTTP/1."))
            .ok_or_else(|| invalid(format!("not an HTTP status line: {status_line:?}")))?;
        let headers = self.read_fields()?;
        let mut response = RawResponse {
            version,
            status,
            headers,
            body: Vec::new(),
            trailers: Vec::new(),
        };
        if head || status / 100 == 1 || status == 204 || status == 304 {
            return Ok(response);
        }
        let chunked = response
            .header("transfer-encoding")
            .is_some_and(|te| te.eq_ignore_ascii_case("chunked"));
        if chunked {
            loop {
                let line = self.read_line()?;
                let size = line.split(';').next().unwrap_or_default().trim();
                let size = usize::from_str_radix(size, 16)
                    .map_err(|_| invalid(format!("bad chunk size line {line:?}")))?;
                if size == 0 {
                    response.trailers = self.read_fields()?;
                    break;
                }
                let start = response.body.len();
                response.body.resize(start + size, 0);
                self.reader.read_exact(&mut response.body[start..])?;
                if !self.read_line()?.is_empty() {
                    return Err(invalid("chunk not followed by CRLF".into()));
                }
            }
        } else if let Some(length) = response.header("content-length") {
            let length: usize = length
                .parse()
                .map_err(|_| invalid(format!("bad Content-Length {length:?}")))?;
            response.body.resize(length, 0);
            self.reader.read_exact(&mut response.body)?;
        } else {
            self.reader.read_to_end(&mut response.body)?;
        }
        Ok(response)
    }

    /// Whether the peer has closed the connection: a read returns end of file (or a reset)
    /// within `wait`. `Ok(false)` when the read timed out with the connection still open; an
    /// error when unexpected bytes arrived.
    pub fn closed_within(&mut self, wait: Duration) -> io::Result<bool> {
        self.reader.get_ref().set_read_timeout(Some(wait))?;
        let result = match self.reader.fill_buf() {
            Ok([]) => Ok(true),
            Ok(bytes) => Err(invalid(format!("unexpected bytes: {bytes:?}"))),
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Ok(true),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        };
        self.reader.get_ref().set_read_timeout(Some(IO_TIMEOUT))?;
        result
    }

    /// One CRLF- (or LF-) terminated line, without the terminator; end of file is an error.
    fn read_line(&mut self) -> io::Result<String> {
        let mut line = Vec::new();
        self.reader.read_until(b'\n', &mut line)?;
        if line.last() != Some(&b'\n') {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("connection closed mid-line after {line:?}"),
            ));
        }
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        String::from_utf8(line).map_err(|e| invalid(format!("line is not UTF-8: {e}")))
    }

    /// Header (or trailer) fields up to the empty line.
    fn read_fields(&mut self) -> io::Result<Vec<(String, String)>> {
        let mut fields = Vec::new();
        loop {
            let line = self.read_line()?;
            if line.is_empty() {
                return Ok(fields);
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| invalid(format!("not a header field: {line:?}")))?;
            fields.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}
