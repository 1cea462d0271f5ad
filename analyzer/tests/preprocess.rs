//! The preprocessor on real files: includes resolved on disk through `DiskLoader`.

use sector_analyzer::front::cuda::preprocess::{preprocess, PreprocessOptions};
use sector_analyzer::source::{DiskLoader, SourceFiles};
use std::path::PathBuf;

/// A fresh folder under the system temp dir, removed at the end of the test.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("sector-pp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src/detail")).unwrap();
        std::fs::create_dir_all(dir.join("include")).unwrap();
        TempDir(dir)
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.0.join(rel);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn includes_on_disk_map_back_to_their_files() {
    let dir = TempDir::new("disk");
    dir.write("include/common.h", "#pragma once\n#define TILE 32\n");
    dir.write("src/detail/idx.h", "#include <common.h>\n#define IDX(i, j) ((i) * TILE + (j))\n");
    let root = dir.write(
        "src/k.cu",
        "#include <cuda_runtime.h>\n#include \"detail/idx.h\"\n#include <common.h>\n__global__ void k(float *p) {\n  p[IDX(threadIdx.y, threadIdx.x)] = 0.f;\n}\n",
    );
    let mut files = SourceFiles::default();
    let id = files.add(&root, std::fs::read_to_string(&root).unwrap());
    let opts = PreprocessOptions { defines: vec![], include_dirs: vec![dir.0.join("include")] };
    let pp = preprocess(&mut files, id, &opts, &DiskLoader).unwrap();

    let row = pp.text.lines().position(|l| l.contains("p[")).unwrap();
    let line = pp.text.lines().nth(row).unwrap();
    assert_eq!(line, "  p[((threadIdx.y) * 32 + (threadIdx.x))] = 0.f;");
    // Expanded text points at the macro name, text after it at itself.
    let span = pp.locate(row, line.find("threadIdx").unwrap(), 9);
    assert_eq!((span.file, span.line, span.column, span.len), (id, 5, 5, 3));
    let span = pp.locate(row, line.find("= 0.f").unwrap(), 1);
    assert_eq!((span.file, span.line, span.column), (id, 5, 36));
    // Both headers were read (once each) and recorded for diagnostics.
    assert_eq!(files.files.len(), 3);
    assert!(files.files.iter().any(|f| f.path.ends_with("src/detail/idx.h")));
}

#[test]
fn missing_quoted_header_names_its_place() {
    let dir = TempDir::new("missing");
    let root = dir.write("src/k.cu", "// kernel\n#include \"nowhere.h\"\n");
    let mut files = SourceFiles::default();
    let id = files.add(&root, std::fs::read_to_string(&root).unwrap());
    let err = preprocess(&mut files, id, &PreprocessOptions::default(), &DiskLoader).unwrap_err();
    let where_ = files.describe(err.span.unwrap());
    assert!(where_.ends_with("src/k.cu:2:10"), "{where_}");
    assert!(err.message.contains("nowhere.h"), "{}", err.message);
}
