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

/// Largest config (`check --config`) or manifest read: a bigger one is refused before reading.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Reads the file at `path`, at most `max` bytes: what is not a regular file (a directory, a
/// device such as /dev/zero, a pipe, a socket) is refused from its metadata before it is opened
/// (opening a FIFO would wait for a writer), and a file that is or grows past `max` is refused
/// after reading at most `max + 1` bytes. `what` names the file in messages ("source file").
pub fn read_bounded(path: &Path, max: u64, what: &str) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let refuse = |m: &std::fs::Metadata| -> Option<String> {
        if m.is_dir() {
            Some(format!("{} is a directory, not a {what}", path.display()))
        } else if !m.is_file() {
            Some(format!("{} is not a regular file (a device, a pipe or a socket): not read", path.display()))
        } else if m.len() > max {
            Some(format!("{} is {} bytes; {what}s over {} are refused", path.display(), m.len(), human(max)))
        } else {
            None
        }
    };
    let m = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if let Some(why) = refuse(&m) {
        return Err(why);
    }
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // The file opened may not be the one looked at (replaced in between): look again.
    if let Some(why) = f.metadata().ok().as_ref().and_then(refuse) {
        return Err(why);
    }
    let mut bytes = Vec::new();
    f.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{} grew past {} while it was read; {what}s over {} are refused",
            path.display(),
            human(max),
            human(max)
        ));
    }
    Ok(bytes)
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// A source file's bytes as text: UTF-16 and UTF-32 (told by their byte-order mark, or by NUL
/// bytes where ASCII text has none) are refused with what they are, since the C preprocessor
/// reads UTF-8; invalid UTF-8 is replaced (U+FFFD); lone CR line endings (old Mac files, which
/// GCC accepts) become LF, so lines count as GCC counts them (same byte length: spans hold).
pub fn decode_source(path: &Path, bytes: &[u8]) -> std::result::Result<String, String> {
    // (what it is, the name iconv reads it by)
    let encoding = if bytes.starts_with(&[0xFF, 0xFE, 0, 0]) {
        Some(("UTF-32 (little-endian, byte-order mark FF FE 00 00)", "UTF-32"))
    } else if bytes.starts_with(&[0, 0, 0xFE, 0xFF]) {
        Some(("UTF-32 (big-endian, byte-order mark 00 00 FE FF)", "UTF-32"))
    } else if bytes.starts_with(&[0xFF, 0xFE]) {
        Some(("UTF-16 (little-endian, byte-order mark FF FE)", "UTF-16"))
    } else if bytes.starts_with(&[0xFE, 0xFF]) {
        Some(("UTF-16 (big-endian, byte-order mark FE FF)", "UTF-16"))
    } else if let Some(at) = bytes.iter().position(|&b| b == 0) {
        // Without a mark: ASCII text in UTF-32 has NULs in three of every four bytes (the
        // last three little-endian, the first three big-endian), in UTF-16 in every other.
        let head = &bytes[..bytes.len().min(4096)];
        let mut zeros = [0usize; 4];
        let mut of = [0usize; 4];
        for (i, &b) in head.iter().enumerate() {
            of[i % 4] += 1;
            zeros[i % 4] += (b == 0) as usize;
        }
        // Nearly every byte of that residue is NUL (a few non-ASCII characters allowed).
        let nul = |r: usize| of[r] > 0 && zeros[r] * 16 >= of[r] * 15;
        let nul2 = |r: usize| of[r] + of[r + 2] > 0 && (zeros[r] + zeros[r + 2]) * 16 >= (of[r] + of[r + 2]) * 15;
        Some(if head.len() >= 8 && nul(1) && nul(2) && nul(3) && !nul(0) {
            ("UTF-32 (little-endian: NUL bytes in three of every four; no byte-order mark)", "UTF-32LE")
        } else if head.len() >= 8 && nul(0) && nul(1) && nul(2) && !nul(3) {
            ("UTF-32 (big-endian: NUL bytes in three of every four; no byte-order mark)", "UTF-32BE")
        } else if head.len() >= 2 && nul2(1) && !nul2(0) {
            ("UTF-16 (little-endian: a NUL byte in every other; no byte-order mark)", "UTF-16LE")
        } else if head.len() >= 2 && nul2(0) && !nul2(1) {
            ("UTF-16 (big-endian: a NUL byte in every other; no byte-order mark)", "UTF-16BE")
        } else {
            return Err(format!(
                "{}: a NUL byte at offset {at}: this is not a text source file (binary data?)",
                path.display()
            ));
        })
    } else {
        None
    };
    if let Some((e, iconv)) = encoding {
        return Err(format!(
            "{} is encoded in {e}; sources are read as UTF-8 (as nvcc reads them): convert it first, e.g. `iconv -f {iconv} -t UTF-8`",
            path.display()
        ));
    }
    let text = String::from_utf8_lossy(bytes).into_owned();
    Ok(lone_cr_to_lf(text))
}

/// `\r` not followed by `\n` becomes `\n` (CR-only line endings); CRLF stays as it is.
pub fn lone_cr_to_lf(text: String) -> String {
    if !text.contains('\r') {
        return text;
    }
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        out.push(if c == b'\r' && b.get(i + 1) != Some(&b'\n') { b'\n' } else { c });
    }
    // Only ASCII bytes were replaced by ASCII bytes: still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Reads a source file (root or included): bounded by [`MAX_SOURCE_BYTES`], regular files
/// only, decoded by [`decode_source`].
pub fn read_source(path: &Path) -> std::result::Result<String, String> {
    let bytes = read_bounded(path, MAX_SOURCE_BYTES, "source file")?;
    decode_source(path, &bytes)
}

/// Reads a config or manifest (TOML): bounded by [`MAX_CONFIG_BYTES`], regular files only,
/// decoded as sources are.
pub fn read_config(path: &Path) -> std::result::Result<String, String> {
    let bytes = read_bounded(path, MAX_CONFIG_BYTES, "config file")?;
    decode_source(path, &bytes)
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
        not_a_source(path).or_else(|| read_source(path).err().filter(|_| path.is_file()))
    }
    fn load(&self, path: &Path) -> Option<String> {
        read_source(path).ok()
    }
}

/// Serves nothing: for sources that must not include files.
pub struct NoFiles;

impl FileLoader for NoFiles {
    fn load(&self, _: &Path) -> Option<String> {
        None
    }
}
