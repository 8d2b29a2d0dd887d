//! The `plan` and `simulate` commands, run as the built binary.

use std::process::Command;

fn freshet(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_freshet"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> serde_json::Value {
    let (ok, stdout, stderr) = freshet(args);
    assert!(ok, "freshet {args:?} failed: {stderr}");
    serde_json::from_str(&stdout).expect("JSON output")
}

fn rates(v: &serde_json::Value) -> Vec<f64> {
    v["rates_per_day"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn plan_json_matches_the_reference() {
    let v = json(&["plan", "--rates", "1,2,3,4,5", "--budget", "5", "--json"]);
    let want = [0.835, 0.968, 1.034, 1.071, 1.093];
    for (g, w) in rates(&v).iter().zip(want) {
        assert!((g - w).abs() < 5e-4, "{v}");
    }
    assert!((v["mean_age_days"].as_f64().unwrap() - 0.2503).abs() < 5e-5);
    let v = json(&[
        "plan",
        "--rates",
        "1,2,3,4,5",
        "--budget",
        "5",
        "--objective",
        "freshness",
        "--json",
    ]);
    let want = [1.150, 1.358, 1.354, 1.138, 0.0];
    for (g, w) in rates(&v).iter().zip(want) {
        assert!((g - w).abs() < 5e-4, "{v}");
    }
    let (ok, table, _) = freshet(&["plan", "--rates", "1,2,3,4,5", "--budget", "5"]);
    assert!(ok && table.contains("mean age: 0.2503"), "{table}");
}

#[test]
fn plan_rates_file_with_host_limits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rates.txt");
    std::fs::write(&path, "# rate,host\n1,a\n2,a\n3\n\n4,b\n5,b\n").unwrap();
    let path = path.to_str().unwrap();
    let v = json(&[
        "plan",
        "--rates-file",
        path,
        "--budget",
        "5",
        "--host-limit",
        "1",
        "--json",
    ]);
    let f = rates(&v);
    assert_eq!(f.len(), 5);
    assert!(
        (f[0] + f[1] - 1.0).abs() < 1e-6 && (f[3] + f[4] - 1.0).abs() < 1e-6,
        "{f:?}"
    );
    assert!((f[2] - 1.0).abs() < 1e-6, "{f:?}");
    std::fs::write(dir.path().join("bad.txt"), "1\nfast,a\n").unwrap();
    let bad = dir.path().join("bad.txt");
    let (ok, _, stderr) = freshet(&[
        "plan",
        "--rates-file",
        bad.to_str().unwrap(),
        "--budget",
        "1",
    ]);
    assert!(!ok && stderr.contains("bad.txt:2"), "{stderr}");
}

#[test]
fn simulate_json_lists_every_policy() {
    let v = json(&[
        "simulate", "--pages", "300", "--hosts", "5", "--days", "12", "--json",
    ]);
    for name in [
        "oracle",
        "freshet",
        "uniform",
        "proportional",
        "changefreq",
        "nutch",
    ] {
        let p = &v["policies"][name];
        assert!(p["mean_age_days"].as_f64().unwrap() >= 0.0, "{v}");
        assert!(p["freshness"].as_f64().unwrap() <= 1.0, "{v}");
        assert!(p["fetches"].as_u64().unwrap() > 0, "{v}");
    }
    let (ok, _, stderr) = freshet(&["simulate", "--signals", "2"]);
    assert!(!ok && stderr.contains("--signals"), "{stderr}");
}

/// A negative number is taken as the option's value and refused by its own rule, not read as an
/// unknown flag ("unexpected argument '-5'" sent the user to the wrong place; helper-88).
#[test]
fn negative_numbers_get_the_options_own_message() {
    for (args, says) in [
        (
            &["plan", "--rates", "1,2", "--budget", "-5"][..],
            "--budget must be",
        ),
        (
            &["plan", "--rates", "-1,2", "--budget", "5"],
            "non-negative",
        ),
        (&["simulate", "--budget", "-1"], "must be positive"),
        (&["demo", "--duration", "-3"], "--duration must be"),
    ] {
        let (ok, _, stderr) = freshet(args);
        assert!(!ok, "{args:?}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("unexpected argument"),
            "{args:?}: {stderr}"
        );
    }
}
