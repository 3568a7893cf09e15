//! `portcullis policy check` through the real binary: error and warning paths index the user's
//! own file, an unknown template is an error, and the summary counts the URLs `--urls` lists. The
//! proxy loading the same file warns with the same path.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn check(file: &std::path::Path, extra: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["policy", "check"])
        .arg(file)
        .args(extra)
        .output()
        .expect("portcullis");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn write(dir: &tempfile::TempDir, body: &str) -> std::path::PathBuf {
    let p = dir.path().join("policy.json");
    std::fs::write(&p, body).expect("write");
    p
}

#[test]
fn an_unknown_violation_is_named_by_its_index_in_the_file_by_check_and_proxy() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = write(
        &dir,
        r#"{"policy": {"name": "p", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
            "blocking-settings": {"violations": [
                {"name": "VIOL_NOT_RAISED_HERE", "alarm": true, "block": true},
                {"name": "VIOL_URL", "alarm": true, "block": true}]}}}"#,
    );
    let (ok, text) = check(&file, &[]);
    assert!(ok, "{text}");
    assert!(
        text.contains(
            "policy.blocking-settings.violations[0].name: violation \"VIOL_NOT_RAISED_HERE\""
        ),
        "{text}"
    );

    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr");
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["proxy", "--listen", &listen.to_string()])
        .args(["--upstream", "http://127.0.0.1:9", "--policy"])
        .arg(&file)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("proxy");
    let mut lines = BufReader::new(proxy.stderr.take().expect("stderr")).lines();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    let warning = loop {
        assert!(Instant::now() < deadline, "{seen:?}");
        let line = lines.next().expect("proxy exited").expect("line");
        if line.contains("VIOL_NOT_RAISED_HERE") {
            break line;
        }
        seen.push(line);
    };
    let _ = proxy.kill();
    let _ = proxy.wait();
    assert!(warning.contains("violations[0].name"), "{warning}");
}

#[test]
fn a_misspelt_template_is_an_error_not_a_silent_fallback() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = write(
        &dir,
        r#"{"policy": {"name": "p", "template": {"name": "POLICY_TEMPLATE_API_SECURTY"}}}"#,
    );
    let (ok, text) = check(&file, &[]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("policy.template.name: unknown template \"POLICY_TEMPLATE_API_SECURTY\"")
            && text.contains("did you mean POLICY_TEMPLATE_API_SECURITY?"),
        "{text}"
    );
}

#[test]
fn the_summary_counts_the_urls_that_urls_lists() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/demo/policy.json");
    let (ok, text) = check(&file, &["--urls"]);
    assert!(ok, "{text}");
    let listed: usize = text
        .lines()
        .find_map(|l| l.strip_suffix(" operations"))
        .and_then(|n| n.parse().ok())
        .expect("operations line");
    assert_eq!(listed, 3, "{text}");
    assert!(
        text.contains("  urls: 3 (0 in the policy, 3 operations of the OpenAPI spec)\n"),
        "{text}"
    );
}
