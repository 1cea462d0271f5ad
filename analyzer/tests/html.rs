//! `analyze --format html`: the page's content against hand-worked counts, its escaping, a
//! snapshot, and the page opened in a real headless browser (Debian's Chromium), whose
//! screenshot must show the coloured source.

use sector_analyzer::html::analyze_with_lanes;
use sector_analyzer::html::{self, BACKGROUND_RGB, IDEAL_RGB, WORST_RGB};
use sector_analyzer::source::{DiskLoader, NoFiles};
use sector_analyzer::{AnalyzeOptions, Input};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Three loads and stores of growing excess, and source text that would be markup if it were not
/// escaped. Grid 4 x block 256 = 32 warps, every lane active; per warp:
///   a[i]:      32 consecutive floats = 128 B = 4 sectors (ideal 4, excess 0)
///   b[2 * i]:  floats 8 B apart, 256 B = 8 sectors (ideal 4, excess 4)
///   c[32 * i]: floats 128 B apart: one sector per lane, 32 (ideal 4, excess 28)
/// Over the launch: a 128 sectors, b 256 (excess 128), c 1,024 (excess 896); 96 requests,
/// 1,408 sectors, 384 ideal.
const THREE: &str = r#"// The report's test kernel: </script><b>not bold</b> & "quoted" must stay text.
__global__ void three(const float *a, const float *b, float *c)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i];
    float y = b[2 * i];
    c[32 * i] = x + y; // "<script>alert(1)</script>"
}
"#;

fn three() -> String {
    let opts = AnalyzeOptions { grid: "4".into(), block: "256".into(), ..Default::default() };
    let (a, lanes) = analyze_with_lanes(Input::Source { name: "three.cu", text: THREE }, &opts, &NoFiles).unwrap();
    let rows: Vec<(u32, u64, u64)> =
        a.sheet.instructions.iter().map(|r| (r.line, r.sectors, r.ideal_sectors)).collect();
    assert_eq!(rows, [(5, 128, 128), (6, 256, 128), (7, 1024, 128)]);
    assert_eq!(lanes.len(), 3);
    // The lane map of c[32 * i]'s first warp: block 0, warp 0, lane L in sector 4 L.
    let c = lanes[2].as_ref().unwrap();
    assert_eq!((c.block, c.warp, c.sectors, c.ideal_sectors), ([0, 0, 0], 0, 32, 4));
    assert!(c.lanes.iter().all(|l| l.sector == Some(4 * l.lane as i64)), "{:?}", c.lanes);
    html::render(&a.sheet, THREE, &lanes)
}

#[test]
fn page_holds_source_numbers_lane_maps_and_escapes_text() {
    let page = three();
    // Markup from the source is text: one script element (the page's own), no <b> from the
    // comment, and the source's text escaped.
    assert_eq!(page.matches("<script").count(), 1, "only the page's own script");
    assert!(!page.contains("<b>not bold"));
    assert!(page.contains("&lt;/script&gt;&lt;b&gt;not bold&lt;/b&gt; &amp; &quot;quoted&quot;"));
    assert!(page.contains("&quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;"));
    // Self-contained: nothing fetched.
    for outside in ["src=\"http", "href=\"http", "@import", "url(", "<link"] {
        assert!(!page.contains(outside), "{outside}");
    }
    // The worst line (7) wears the worst colour, the ideal one (5) the ideal colour.
    let worst = format!("#{:02x}{:02x}{:02x}", WORST_RGB.0, WORST_RGB.1, WORST_RGB.2);
    let ideal = format!("#{:02x}{:02x}{:02x}", IDEAL_RGB.0, IDEAL_RGB.1, IDEAL_RGB.2);
    let line = |n: u32| page.lines().find(|l| l.starts_with(&format!("<tr id=\"L{n}\""))).unwrap().to_string();
    assert!(line(7).contains(&worst), "{}", line(7));
    assert!(line(5).contains(&ideal), "{}", line(5));
    assert!(!line(6).contains(&worst) && !line(6).contains(&ideal), "{}", line(6));
    assert!(!line(4).contains("class=\"mem"), "no access on line 4");
    // Totals and the rows' numbers, worked out above.
    for n in ["1,408", "1,024", "896", "32.00 sect/req", "8.00 sect/req", "4.00 sect/req"] {
        assert!(page.contains(n), "{n}");
    }
    // Three panels, the worst shown first; its lane map has 32 lanes, lane 31 in sector 124.
    assert_eq!(page.matches("<div class=\"detail\"").count(), 3);
    assert!(page.contains("<div class=\"detail\" data-row=\"2\">"));
    assert!(page.contains("title=\"lane 31, thread (31, 0, 0): active; c[992], sector 124\""));
    // The boundaries chart.
    assert!(page.contains("<svg") && page.contains("DRAM reads"));
}

#[test]
fn snapshot_of_transpose_naive() {
    let path = root().join("examples/transpose_naive.cu");
    let opts = AnalyzeOptions {
        kernel: Some("transpose_naive".into()),
        grid: "8,32".into(),
        block: "32,8".into(),
        args: vec![("rows".into(), "256".into()), ("cols".into(), "256".into())],
        ..Default::default()
    };
    let (mut a, lanes) = analyze_with_lanes(Input::File(&path), &opts, &DiskLoader).unwrap();
    a.sheet.file = "examples/transpose_naive.cu".into();
    // 256 x 256 floats, 2,048 warps: loads 4 sectors per warp, stores 32 (ideal 4).
    let t = &a.sheet.totals;
    assert_eq!((t.global_load.sectors, t.global_store.sectors, t.global_store.ideal_sectors), (8192, 65536, 8192));
    let page = html::render(&a.sheet, &a.files.files[0].text, &lanes);
    assert!(page.contains("57,344"), "the stores' excess: 65,536 - 8,192");
    // The page's fixed style and script are not what this snapshot watches.
    let cut = |page: &str, open: &str, close: &str| {
        let (a, b) = (page.find(open).unwrap() + open.len(), page.find(close).unwrap());
        format!("{}...{}", &page[..a], &page[b..])
    };
    let page = cut(&cut(&page, "<style>", "</style>"), "<script>", "</script>");
    insta::with_settings!({
        snapshot_path => "../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("html_transpose_naive", page);
    });
}

/// Debian's Chromium, where it is installed.
fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Runs the browser headless on `page` with `extra` flags; its stdout. Killed after a minute.
fn browse(browser: &Path, page: &Path, profile: &Path, extra: &[&str]) -> Vec<u8> {
    let mut child = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--window-size=1200,900", "--hide-scrollbars"])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut out = Vec::new();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

/// The page in a real browser: the DOM holds the source as text and the rows' numbers, and the
/// screenshot shows the source with its worst line in the worst colour, text drawn over it.
#[test]
fn chromium_renders_the_coloured_source() {
    let Some(browser) = chromium() else {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("note: no Chromium found (apt-get install -y chromium): the HTML report's browser test skips");
        }
        return;
    };
    let dir = std::env::temp_dir().join(format!("sector-estimate-html-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("profile")).unwrap();
    let page = dir.join("three.html");
    std::fs::write(&page, three()).unwrap();

    let dom = String::from_utf8(browse(&browser, &page, &dir.join("profile"), &["--dump-dom"])).unwrap();
    // The DOM has the comment's markup as text, and no element made from it.
    assert!(dom.contains("&lt;/script&gt;&lt;b&gt;not bold&lt;/b&gt;"), "{dom}");
    assert!(!dom.contains("<b>not bold"));
    assert!(dom.contains("c[32 * i] = x + y;"));
    for n in ["1,408", "1,024", "896", "32.00 sect/req"] {
        assert!(dom.contains(n), "{n}");
    }

    let shot = dir.join("three.png");
    browse(&browser, &page, &dir.join("profile"), &[&format!("--screenshot={}", shot.display())]);
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (w, h) = (info.width as usize, info.height as usize);
    let channels = info.color_type.samples();
    assert_eq!((w, h), (1200, 900));
    let px = |x: usize, y: usize| {
        let i = (y * w + x) * channels;
        (buf[i], buf[i + 1], buf[i + 2])
    };
    let near =
        |a: (u8, u8, u8), b: (u8, u8, u8)| a.0.abs_diff(b.0) <= 2 && a.1.abs_diff(b.1) <= 2 && a.2.abs_diff(b.2) <= 2;
    // The source is the left column of the first screen (the panel on the right is 440 px).
    let source_w = w - 440;
    let rows_of = |c: (u8, u8, u8)| -> Vec<usize> {
        (0..h).filter(|&y| (0..source_w).filter(|&x| near(px(x, y), c)).count() > source_w / 2).collect()
    };
    let worst = rows_of(WORST_RGB);
    let ideal = rows_of(IDEAL_RGB);
    // One source line is about 20 px tall.
    assert!(worst.len() >= 12, "the worst line's highlight is on screen: {} rows of pixels", worst.len());
    assert!(ideal.len() >= 12, "the ideal line's highlight is on screen: {} rows of pixels", ideal.len());
    assert!(ideal[0] < worst[0], "line 5 above line 7");
    // Text drawn over the worst line: dark pixels inside its band.
    let dark = |p: (u8, u8, u8)| (p.0 as u32 + p.1 as u32 + p.2 as u32) < 3 * 110;
    let text_on_worst = worst.iter().map(|&y| (0..source_w).filter(|&x| dark(px(x, y))).count()).sum::<usize>();
    assert!(text_on_worst > 100, "the worst line's code is drawn: {text_on_worst} dark pixels");
    // And the lines above (1 to 4): text on the page's background.
    let above = (ideal[0].saturating_sub(80)..ideal[0])
        .map(|y| (0..source_w).filter(|&x| !near(px(x, y), BACKGROUND_RGB) && dark(px(x, y))).count())
        .sum::<usize>();
    assert!(above > 200, "the source lines above are drawn: {above} dark pixels");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The command line: `--format html` writes the page to stdout.
#[test]
fn cli_writes_the_page() {
    let o = Command::new(env!("CARGO_BIN_EXE_sector-estimate"))
        .current_dir(root())
        .args(["analyze", "examples/transpose_naive.cu", "--grid", "8,32", "--block", "32x8"])
        .args(["--arg", "rows=256", "--arg", "cols=256", "--format", "html"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let page = String::from_utf8(o.stdout).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    // The store's first warp: lanes 1,024 bytes apart (rows = 256 floats), lane 1 in sector 32.
    assert!(page.contains("title=\"lane 1, thread (1, 0, 0): active; out[256], sector 32\""), "{page}");
}

/// A row whose first warp comes last in a large launch: the report does not wait for its lane
/// map past its budget ([`LANE_MAPS_TIME`]) and says why it has none; its counts are all there
/// (the last block's 32 warps store 1,024 consecutive floats: 4 sectors each, 128). The barrier
/// keeps the load in every block (nvcc sinks a load into the one branch that uses it only when
/// nothing between may write memory).
#[test]
fn a_lane_map_too_far_away_is_left_out_with_the_reason() {
    use sector_analyzer::html::LANE_MAPS_TIME;
    const LATE: &str = "__global__ void late(float *out, const float *in)
{
    float v = in[blockIdx.x * blockDim.x + threadIdx.x]; __syncthreads();
    if (blockIdx.x == gridDim.x - 1) {
        out[threadIdx.x] = v;
    }
}
";
    let opts = AnalyzeOptions { grid: "2000000".into(), block: "1024".into(), ..Default::default() };
    let start = Instant::now();
    let (a, lanes) = analyze_with_lanes(Input::Source { name: "late.cu", text: LATE }, &opts, &NoFiles).unwrap();
    assert!(start.elapsed() < LANE_MAPS_TIME * 5, "{:?}", start.elapsed());
    let out = &a.sheet.instructions[1];
    assert_eq!((out.line, out.requests, out.sectors), (5, 32, 128));
    assert!(lanes[0].is_ok(), "block 0 loads: found at once");
    let why = lanes[1].as_ref().unwrap_err();
    assert!(why.contains("longer than 2 s"), "{why}");
    let page = html::render(&a.sheet, LATE, &lanes);
    assert!(page.contains("No lane map: looking for the first warp that executes it stopped"));
}
