//! The entries of a zip archive read one at a time (an Inspect `.eval` log): the `zip` crate reads
//! the central directory and hands each entry's bytes over raw; they are inflated here
//! (Zstandard, Inspect's default since 0.3.x, or deflate) and checked against the entry's CRC-32,
//! so a truncated or damaged entry is an error naming the archive and the entry, never a short
//! read taken for data. Only one entry is in memory at a time.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use zip::{CompressionMethod, ZipArchive};

use crate::error::{Error, Result};

/// An open archive.
pub struct ZipEntries {
    path: PathBuf,
    archive: ZipArchive<BufReader<File>>,
}

impl ZipEntries {
    /// Open `path`; a file that is not a zip (or whose end, with its directory, was cut off) is
    /// an error naming it.
    pub fn open(path: &Path) -> Result<ZipEntries> {
        let file = File::open(path).map_err(|source| Error::Read { path: path.into(), source })?;
        let archive = ZipArchive::new(BufReader::new(file))
            .map_err(|e| Error::input_from(path, "not a readable zip archive (truncated, or not an .eval log)", e))?;
        Ok(ZipEntries { path: path.into(), archive })
    }

    /// Every entry's name, in the archive's order.
    pub fn names(&self) -> Vec<String> {
        self.archive.file_names().filter_map(|n| n.ok().map(|n| n.into_owned())).collect()
    }

    /// Whether the archive has an entry `name`.
    pub fn has(&self, name: &str) -> bool {
        self.archive.index_for_name(name).is_some()
    }

    /// The bytes of entry `name`, inflated and checked.
    pub fn read(&mut self, name: &str) -> Result<Vec<u8>> {
        let at = |m: String| Error::input(&self.path, format!("{name}: {m}"));
        let index = self.archive.index_for_name(name).ok_or_else(|| at("no such entry".into()))?;
        let mut entry = self.archive.by_index_raw(index).map_err(|e| at(format!("cannot be read ({e})")))?;
        let (method, crc, size) = (entry.compression(), entry.crc32(), entry.size());
        let mut raw = Vec::with_capacity(entry.compressed_size() as usize);
        entry.read_to_end(&mut raw).map_err(|e| at(format!("cut short ({e}): the archive is truncated")))?;
        drop(entry);
        let mut out = Vec::with_capacity(size as usize);
        let inflated = if method == CompressionMethod::STORE {
            out = raw;
            Ok(out.len())
        } else if method == CompressionMethod::ZSTD {
            zstd::stream::read::Decoder::new(raw.as_slice()).and_then(|mut d| d.read_to_end(&mut out))
        } else if method == CompressionMethod::DEFLATE {
            flate2::read::DeflateDecoder::new(raw.as_slice()).read_to_end(&mut out)
        } else {
            return Err(at(format!(
                "compressed with {method}, which lucid does not read (Zstandard, deflate or stored)"
            )));
        };
        inflated.map_err(|e| at(format!("does not inflate ({e}): the archive is damaged or truncated")))?;
        let mut check = flate2::Crc::new();
        check.update(&out);
        if out.len() as u64 != size || check.sum() != crc {
            return Err(at(format!(
                "inflates to {} bytes with CRC {:08x}, not the {size} bytes with CRC {crc:08x} its directory says: the archive is damaged",
                out.len(),
                check.sum()
            )));
        }
        Ok(out)
    }
}
