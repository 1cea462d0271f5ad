//! `profile`'s orchestration (the ncu command, the log, the exports, the raw folder) with a
//! stand-in `ncu` that serves the recorded H200 pages: no GPU needed.

use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-probe")
}

const FAKE_NCU: &str = r#"#!/usr/bin/env bash
FX='@RAW@'
if [ "$1" = "--version" ]; then cat "$FX/ncu-version.txt"; exit 0; fi
if [ "$1" = "-i" ]; then
  case " $* " in
    *" --page raw "*) cat "$FX/raw.csv" ;;
    *" --page session "*) cat "$FX/session.csv" ;;
    *" --page source "*)
      n=$(echo "$*" | sed -n 's/.*--launch-skip \([0-9]*\).*/\1/p')
      cat "$FX/source-$n.csv" ;;
    *) exit 1 ;;
  esac
  exit 0
fi
echo "$*" > "$(dirname "$0")/profile-args.txt"
while [ $# -gt 0 ]; do
  case "$1" in
    --export) rep="$2"; shift ;;
    --log) log="$2"; shift ;;
  esac
  shift
done
cp "$FX/launch.json" "$log"
# (a call without --export, such as the metrics query, leaves no report file behind)
[ -n "$rep" ] && : > "$rep.ncu-rep"
for k in 0 1 2 3 4; do echo "==PROF== Profiling \"kernel\" - $k: 0%....50%....100% - 9 passes"; done
echo "some target output" >&2
"#;

#[test]
fn profile_runs_ncu_once_and_exports_every_launch() {
    let tmp = std::env::temp_dir().join(format!("sector-validate-fake-ncu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let ncu = tmp.join("ncu");
    let script = FAKE_NCU.replace("@RAW@", &fixture().join("raw").display().to_string());
    std::fs::write(&ncu, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let raw = tmp.join("out/raw");
    let examples = fixture().join("examples");
    let run = sector_validate::profile::ProfileRun {
        ncu: &ncu,
        examples: &examples,
        raw: &raw,
        cases: &["probe_vec_add_1m".to_string()],
        expected_launches: 4,
    };
    let warning = sector_validate::profile::profile(&run).unwrap();
    assert!(warning.is_none(), "{warning:?}");

    let args = std::fs::read_to_string(tmp.join("profile-args.txt")).unwrap();
    for want in [
        "--clock-control none",
        "--section SourceCounters",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "dram__sectors_read.sum",
        " launch --examples ",
        "--case probe_vec_add_1m",
    ] {
        assert!(args.contains(want), "{want} not in: {args}");
    }
    for f in ["raw.csv", "session.csv", "ncu-version.txt", "launch.json", "source-0.csv", "source-4.csv"] {
        assert!(raw.join(f).exists(), "{f}");
    }
    let log = std::fs::read_to_string(raw.join("ncu-profile.log")).unwrap();
    assert!(log.contains("==PROF== Profiling") && log.contains("some target output"));

    let m = sector_validate::rawdir::load(&raw).unwrap();
    assert_eq!(m.sources.len(), 5);
    let specs = sector_validate::plan::load_cases(&examples, &[]).unwrap();
    let r = sector_validate::compare::build_report(&specs, &m, Default::default());
    let s = r.summary.iter().find(|s| s.key == "global_load_sectors").unwrap();
    assert_eq!(s.line(), "global load sectors: 4/4 cases exact");
    let _ = std::fs::remove_dir_all(&tmp);
}
