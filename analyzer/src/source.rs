//! Source files and locations. Every span the tool reports points into one of these files.

use std::path::{Path, PathBuf};

/// Index of a file in [`SourceFiles`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A 1-based line and column (in characters) inside one file, and the length of the construct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub line: u32,
    pub column: u32,
    /// Length in bytes on that line (at least 1), for carets.
    pub len: u32,
}

#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

/// All files read for one analysis: the root file first, then its includes.
#[derive(Clone, Debug, Default)]
pub struct SourceFiles {
    pub files: Vec<SourceFile>,
}

impl SourceFiles {
    pub fn add(&mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile { path: path.into(), text: text.into() });
        id
    }
    pub fn path(&self, id: FileId) -> &Path {
        &self.files[id.0 as usize].path
    }
    pub fn text(&self, id: FileId) -> &str {
        &self.files[id.0 as usize].text
    }
    /// The text of line `line` (1-based) of a file, without its newline.
    pub fn line_text(&self, id: FileId, line: u32) -> Option<&str> {
        self.files.get(id.0 as usize)?.text.lines().nth(line.checked_sub(1)? as usize)
    }
    /// `path:line:column` for messages.
    pub fn describe(&self, span: Span) -> String {
        format!("{}:{}:{}", self.path(span.file).display(), span.line, span.column)
    }
}

/// Largest source file read (root or included): a bigger one is refused before reading.
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// Why `path` is not a source file to read (a directory, a device, a pipe, a file over
/// [`MAX_SOURCE_BYTES`]), decided from its metadata before reading a byte; `None` when it is
/// one or cannot be inspected (reading it then says why).
pub fn not_a_source(path: &Path) -> Option<String> {
    let m = std::fs::metadata(path).ok()?;
    if m.is_dir() {
        Some(format!("{} is a directory, not a source file", path.display()))
    } else if !m.is_file() {
        Some(format!("{} is not a regular file (a device, a pipe or a socket): not read", path.display()))
    } else if m.len() > MAX_SOURCE_BYTES {
        Some(format!(
            "{} is {} bytes; source files over {} MiB are refused",
            path.display(),
            m.len(),
            MAX_SOURCE_BYTES >> 20
        ))
    } else {
        None
    }
}

/// Reads included files; the CLI reads the disk, tests and the attribute may serve memory.
pub trait FileLoader {
    fn load(&self, path: &Path) -> Option<String>;
    /// Why a file that exists must not be read (see [`not_a_source`]).
    fn refusal(&self, _path: &Path) -> Option<String> {
        None
    }
}

/// Loads from the file system.
pub struct DiskLoader;

impl FileLoader for DiskLoader {
    fn refusal(&self, path: &Path) -> Option<String> {
        not_a_source(path)
    }
    fn load(&self, path: &Path) -> Option<String> {
        if not_a_source(path).is_some() {
            return None;
        }
        let bytes = std::fs::read(path).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Serves nothing: for sources that must not include files.
pub struct NoFiles;

impl FileLoader for NoFiles {
    fn load(&self, _: &Path) -> Option<String> {
        None
    }
}
