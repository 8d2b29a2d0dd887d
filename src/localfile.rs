//! Reading a local file the user named (a schedule, a robots.txt or feed to inspect) without
//! trusting what it is: only regular files (a FIFO blocks forever on open, `/dev/zero` never
//! ends), and never more than a cap, so memory stays bounded whatever the path points at.

use std::io::Read;
use std::path::Path;

/// Why a local file was not read. Displays as one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum LocalFileError {
    /// Not a regular file.
    #[error("{path}: not a regular file (a FIFO, device or socket); refused")]
    NotRegular {
        /// The path.
        path: String,
    },
    /// Larger than the cap.
    #[error("{path}: larger than the {cap}-byte cap")]
    TooLarge {
        /// The path.
        path: String,
        /// The cap in force.
        cap: u64,
    },
    /// The file could not be opened or read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The path.
        path: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// Reads `path` whole if it is a regular file of at most `cap` bytes.
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, LocalFileError> {
    let name = || path.display().to_string();
    let io = |source| LocalFileError::Io {
        path: name(),
        source,
    };
    let regular = |meta: &std::fs::Metadata| {
        if meta.is_file() {
            Ok(())
        } else {
            Err(LocalFileError::NotRegular { path: name() })
        }
    };
    let too_large = || LocalFileError::TooLarge { path: name(), cap };
    // Checked before opening: opening a FIFO for reading blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(io)?;
    regular(&meta)?;
    if meta.len() > cap {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).map_err(io)?;
    // Again on the open file, in case the path was swapped in between.
    regular(&file.metadata().map_err(io)?)?;
    let mut bytes = Vec::new();
    // One byte past the cap tells a file that grew since the check.
    file.take(cap + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_folders_and_large_files_are_refused() {
        let err = read_regular(Path::new("/dev/zero"), 1024).unwrap_err();
        assert!(matches!(err, LocalFileError::NotRegular { .. }), "{err}");
        assert!(err.to_string().starts_with("/dev/zero: "));
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_regular(dir.path(), 1024),
            Err(LocalFileError::NotRegular { .. })
        ));
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; 1025]).unwrap();
        let err = read_regular(&big, 1024).unwrap_err();
        assert!(err.to_string().contains("1024-byte cap"), "{err}");
        std::fs::write(&big, b"ok").unwrap();
        assert_eq!(read_regular(&big, 1024).unwrap(), b"ok");
        assert!(matches!(
            read_regular(&dir.path().join("none"), 1),
            Err(LocalFileError::Io { .. })
        ));
    }
}
