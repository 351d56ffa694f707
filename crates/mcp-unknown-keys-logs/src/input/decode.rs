//! Compressed inputs, recognised by their first bytes whatever their name:
//! gzip (several members, as `cat a.gz b.gz` makes, read as one) and
//! Zstandard (several frames likewise), both in pure Rust.

use std::io::{self, BufRead, BufReader, Read};

use flate2::bufread::MultiGzDecoder;
use ruzstd::decoding::StreamingDecoder;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// How an input is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    /// The compression `start` (the first bytes of an input) shows, if any.
    pub(super) fn of(start: &[u8]) -> Option<Compression> {
        if start.starts_with(&GZIP_MAGIC) {
            Some(Compression::Gzip)
        } else if start.starts_with(&ZSTD_MAGIC) {
            Some(Compression::Zstd)
        } else {
            None
        }
    }

    /// `reader`'s bytes, decompressed.
    pub(super) fn decode(self, reader: Box<dyn BufRead>) -> io::Result<Box<dyn BufRead>> {
        Ok(match self {
            Compression::Gzip => Box::new(BufReader::with_capacity(256 << 10, MultiGzDecoder::new(reader))),
            Compression::Zstd => Box::new(BufReader::with_capacity(256 << 10, ZstdFrames::new(reader)?)),
        })
    }
}

/// Zstandard frames one after another, read as one stream.
struct ZstdFrames {
    frame: Option<StreamingDecoder<Box<dyn BufRead>, ruzstd::decoding::FrameDecoder>>,
}

impl ZstdFrames {
    fn new(reader: Box<dyn BufRead>) -> io::Result<ZstdFrames> {
        Ok(ZstdFrames {
            frame: Some(StreamingDecoder::new(reader).map_err(io::Error::other)?),
        })
    }
}

impl Read for ZstdFrames {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(frame) = self.frame.as_mut() else {
                return Ok(0);
            };
            let read = frame.read(buf)?;
            if read > 0 || buf.is_empty() {
                return Ok(read);
            }
            // This frame is done: another may follow.
            let mut source = self.frame.take().expect("a frame").into_inner();
            if source.fill_buf()?.is_empty() {
                return Ok(0);
            }
            self.frame = Some(StreamingDecoder::new(source).map_err(io::Error::other)?);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn decoded(bytes: Vec<u8>) -> String {
        let compression = Compression::of(&bytes).expect("compressed");
        let mut text = String::new();
        compression
            .decode(Box::new(io::Cursor::new(bytes)))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        text
    }

    #[test]
    fn gzip_members_are_read_as_one_stream() {
        let mut bytes = Vec::new();
        for part in ["{\"a\":1}\n", "{\"b\":2}\n"] {
            let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(part.as_bytes()).unwrap();
            bytes.extend(encoder.finish().unwrap());
        }
        assert_eq!(decoded(bytes), "{\"a\":1}\n{\"b\":2}\n");
    }

    #[test]
    fn zstd_frames_are_read_as_one_stream() {
        let mut bytes = Vec::new();
        for part in ["{\"a\":1}\n", "{\"b\":2}\n"] {
            bytes.extend(ruzstd::encoding::compress_to_vec(
                part.as_bytes(),
                ruzstd::encoding::CompressionLevel::Fastest,
            ));
        }
        assert_eq!(decoded(bytes), "{\"a\":1}\n{\"b\":2}\n");
    }

    #[test]
    fn plain_text_is_not_taken_for_compressed() {
        assert_eq!(Compression::of(b"{\"a\":1}"), None);
        assert_eq!(Compression::of(b""), None);
    }
}
