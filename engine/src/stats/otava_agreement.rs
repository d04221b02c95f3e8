//! Agreement with Apache Otava (PyPI `apache-otava`, whose split-and-merge E-Divisive our
//! `changepoint::detect` follows): seeded series are written to files, Otava's
//! `otava.analysis.compute_change_points` runs on them in Python, and its change points must be
//! ours with `serial_correlation: false` and the same window and `max_p`: the same indices, and
//! p-values equal to Otava's t-test between each point's final neighbours (the p-value Otava
//! returns is stale for a point whose right neighbour its merge removed: apache/otava#96; the
//! test counts them). `cargo test -p loadgate --lib stats::otava_agreement -- --nocapture`
//! prints both sides.
//!
//! Otava is installed into a virtual environment at `target/ci-tools/otava-venv` (python3 -m venv;
//! pip install apache-otava), reused when present; `scripts/test` installs it before the tests
//! run, and this test installs it itself when run alone.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::changepoint::{Options, detect};
use super::sims::ar1;

/// Otava's release the agreement was checked with (its `analysis.py` is the reference).
const OTAVA: &str = "apache-otava==0.8.0";

/// Reads `series.json` (a list of `[window, max_p, [values…]]`), prints per series a JSON list
/// of `[index, p-value as Otava returns it, p-value re-tested between the final neighbours]`:
/// Otava's merge leaves a change point's statistics stale when its right neighbour is removed
/// (it re-tests the removed point's right neighbour and the one after; apache/otava#96), so the
/// second p-value is its own t-test run on the final segmentation.
const SCRIPT: &str = r#"
import json, sys
from otava.analysis import TTestSignificanceTester, compute_change_points
cases = json.load(open(sys.argv[1]))
out = []
for window, max_p, values in cases:
    points, _ = compute_change_points(values, window_len=window, max_pvalue=max_p, min_magnitude=0.0)
    tester = TTestSignificanceTester(max_p)
    intervals = tester.get_intervals(points)
    fresh = [tester.change_point(p.to_candidate(), values, intervals).stats.pvalue for p in points]
    out.append([[int(p.index), float(p.stats.pvalue), float(f)] for p, f in zip(points, fresh)])
print(json.dumps(out))
"#;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the engine sits in the workspace")
        .to_path_buf()
}

/// The virtual environment's python, installing Otava first when it is missing.
fn otava_python() -> PathBuf {
    let venv = workspace().join("target/ci-tools/otava-venv");
    let python = venv.join("bin/python");
    let installed = Command::new(&python)
        .args(["-c", "import otava.analysis"])
        .output()
        .is_ok_and(|output| output.status.success());
    if !installed {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 runs");
        assert!(status.success(), "python3 -m venv {}", venv.display());
        let status = Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", OTAVA])
            .status()
            .expect("pip runs");
        assert!(status.success(), "pip install {OTAVA}");
    }
    python
}

/// One seeded series: `n` values `100·exp(sd·e_t + step_t)`, e AR(1) with coefficient `rho`,
/// steps of `(from, size)` on the log.
struct Case {
    seed: u64,
    n: usize,
    sd: f64,
    rho: f64,
    steps: &'static [(usize, f64)],
    window: usize,
    max_p: f64,
}

impl Case {
    fn values(&self) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(self.seed);
        ar1(&mut rng, self.n, self.rho)
            .into_iter()
            .enumerate()
            .map(|(t, e)| {
                let shift: f64 = self
                    .steps
                    .iter()
                    .filter(|(from, _)| t >= *from)
                    .map(|(_, size)| size)
                    .sum();
                // Rounded to 1e-6 as a JSON number both sides read alike.
                (100.0 * (self.sd * e + shift).exp() * 1e6).round() / 1e6
            })
            .collect()
    }
}

fn cases() -> Vec<Case> {
    let base = Case {
        seed: 1,
        n: 60,
        sd: 0.02,
        rho: 0.0,
        steps: &[],
        window: 60,
        max_p: 0.001,
    };
    vec![
        Case { seed: 1, ..base },
        Case {
            seed: 2,
            steps: &[(30, 0.08)],
            ..base
        },
        Case {
            seed: 3,
            n: 120,
            steps: &[(40, 0.1), (85, -0.06)],
            ..base
        },
        Case {
            seed: 4,
            n: 100,
            sd: 0.03,
            rho: 0.4,
            steps: &[(70, 0.08)],
            ..base
        },
        Case {
            seed: 5,
            n: 80,
            steps: &[(20, 0.05), (50, 0.05)],
            window: 30,
            ..base
        },
        Case {
            seed: 6,
            n: 90,
            sd: 0.05,
            rho: 0.4,
            steps: &[(45, 0.08)],
            window: 50,
            max_p: 0.01,
        },
        Case {
            seed: 7,
            n: 150,
            sd: 0.01,
            steps: &[(30, 0.02), (60, 0.03), (100, -0.04), (130, 0.02)],
            ..base
        },
        Case {
            seed: 8,
            n: 60,
            sd: 0.04,
            rho: 0.4,
            ..base
        },
        Case {
            seed: 9,
            n: 200,
            sd: 0.02,
            rho: 0.2,
            steps: &[(50, 0.04), (120, 0.06), (160, -0.1)],
            window: 40,
            max_p: 0.05,
        },
    ]
}

#[test]
fn change_points_agree_with_apache_otava() {
    let cases = cases();
    let series: Vec<Vec<f64>> = cases.iter().map(Case::values).collect();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = dir.path().join("series.json");
    let json: Vec<serde_json::Value> = cases
        .iter()
        .zip(&series)
        .map(|(case, values)| serde_json::json!([case.window, case.max_p, values]))
        .collect();
    std::fs::write(&input, serde_json::to_string(&json).unwrap()).expect("series written");
    let script = dir.path().join("otava_points.py");
    std::fs::write(&script, SCRIPT).expect("script written");
    let output = Command::new(otava_python())
        .arg(&script)
        .arg(&input)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "otava failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let theirs: Vec<Vec<(usize, f64, f64)>> =
        serde_json::from_slice(&output.stdout).expect("Otava's JSON");
    let (mut found, mut stale) = (0, 0);
    for ((case, values), theirs) in cases.iter().zip(&series).zip(&theirs) {
        let options = Options {
            window: case.window,
            max_p: case.max_p,
            min_magnitude: 0.0,
            serial_correlation: false,
        };
        let ours = detect(values, &options);
        println!(
            "seed {} (n {}, window {}, max_p {}): Otava (index, p, p re-tested) {theirs:?}, ours {:?}",
            case.seed,
            case.n,
            case.window,
            case.max_p,
            ours.iter()
                .map(|p| (p.index, p.p_value))
                .collect::<Vec<_>>()
        );
        let ours_indices: Vec<usize> = ours.iter().map(|p| p.index).collect();
        let their_indices: Vec<usize> = theirs.iter().map(|(index, ..)| *index).collect();
        assert_eq!(ours_indices, their_indices, "seed {}", case.seed);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.max(b) + 1e-300;
        for (point, &(_, returned, retested)) in ours.iter().zip(theirs) {
            assert!(
                close(point.p_value, retested),
                "seed {}: p {} against Otava's t-test {retested}",
                case.seed,
                point.p_value
            );
            stale += usize::from(!close(returned, retested));
        }
        found += ours.len();
    }
    println!(
        "{} series: the same {found} change points; {stale} of Otava's returned p-values were stale (a right neighbour removed in its merge), every one equal to ours once re-tested",
        cases.len()
    );
    assert!(found >= 10, "the cases have change points to agree on");
}
