//! The chunked transfer coding of HTTP/1.1 bodies (RFC 9112 §7.1), decoded as it arrives.

use crate::measure::ErrorKind;

/// Incremental decoder of the chunked transfer coding (RFC 9112 §7.1) that counts and
/// discards the data. Chunk extensions and trailer fields are skipped.
#[derive(Debug, Default)]
pub(crate) struct ChunkedDecoder {
    state: ChunkState,
    size: u64,
    digits: u32,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    FinalLf,
    Done,
}

impl ChunkedDecoder {
    /// Whether the last chunk and the trailer have been read.
    pub(crate) fn is_done(&self) -> bool {
        self.state == ChunkState::Done
    }

    /// Consumes bytes of the body, handing chunk data to `data`; returns how many bytes were
    /// used (fewer than given only when the body ended). Errors: [`ErrorKind::Malformed`].
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        data: &mut impl FnMut(&[u8]),
    ) -> Result<usize, ErrorKind> {
        use ChunkState::*;
        let mut i = 0;
        while i < bytes.len() && self.state != Done {
            if self.state == Data {
                let take = (bytes.len() - i).min(usize::try_from(self.size).unwrap_or(usize::MAX));
                data(&bytes[i..i + take]);
                i += take;
                self.size -= take as u64;
                if self.size == 0 {
                    self.state = DataCr;
                }
                continue;
            }
            let b = bytes[i];
            i += 1;
            self.state = match (self.state, b) {
                (Size, b) if b.is_ascii_hexdigit() => {
                    self.digits += 1;
                    if self.digits > 15 {
                        return Err(ErrorKind::Malformed);
                    }
                    self.size = self.size * 16 + u64::from((b as char).to_digit(16).unwrap_or(0));
                    Size
                }
                (Size, b';' | b' ' | b'\t') if self.digits > 0 => Extension,
                (Size, b'\r') if self.digits > 0 => SizeLf,
                (Size, b'\n') if self.digits > 0 => self.end_size_line(),
                (Extension, b'\r') => SizeLf,
                (Extension, b'\n') | (SizeLf, b'\n') => self.end_size_line(),
                (Extension, _) => Extension,
                (DataCr, b'\r') => DataLf,
                (DataCr, b'\n') | (DataLf, b'\n') => Size,
                (TrailerStart, b'\r') => FinalLf,
                (TrailerStart, b'\n') | (FinalLf, b'\n') => Done,
                (TrailerStart, _) | (TrailerLine, _) if b != b'\n' => TrailerLine,
                (TrailerLine, b'\n') => TrailerStart,
                _ => return Err(ErrorKind::Malformed),
            };
        }
        Ok(i)
    }

    fn end_size_line(&mut self) -> ChunkState {
        let next = if self.size == 0 {
            ChunkState::TrailerStart
        } else {
            ChunkState::Data
        };
        self.digits = 0;
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(body: &[u8], piece: usize) -> Result<(usize, bool), ErrorKind> {
        let mut decoder = ChunkedDecoder::default();
        let mut used = 0;
        for part in body.chunks(piece) {
            used += decoder.feed(part, &mut |_| {})?;
            if decoder.is_done() {
                break;
            }
        }
        Ok((used, decoder.is_done()))
    }

    #[test]
    fn chunked_bodies_in_any_split() {
        let body = b"5;ext=1\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT";
        let end = body.len() - 4;
        for piece in 1..=body.len() {
            assert_eq!(
                decode_in_pieces(body, piece),
                Ok((end, true)),
                "piece {piece}"
            );
        }
    }

    #[test]
    fn chunked_without_trailer_and_lenient_lf() {
        let body = b"3\r\nabc\r\n0\r\n\r\n";
        assert_eq!(decode_in_pieces(body, 4), Ok((body.len(), true)));
        let body = b"3\nabc\n0\n\n";
        assert_eq!(decode_in_pieces(body, 1), Ok((body.len(), true)));
        assert_eq!(decode_in_pieces(b"3\r\nab", 100), Ok((5, false)));
    }

    #[test]
    fn chunked_garbage_is_malformed() {
        for body in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"3\r\nabcX\r\n",
            b"ffffffffffffffff1\r\n",
        ] {
            assert_eq!(
                decode_in_pieces(body, 100),
                Err(ErrorKind::Malformed),
                "{body:?}"
            );
        }
    }
}
