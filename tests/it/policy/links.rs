//! One link resolver: `policy check`, `portcullis proxy` and the controller read the file links of
//! a policy the same way. A table of link forms (relative, `file://`, `file:///`, `..`, symlinks
//! leading in and out) is loaded by each entry point's own code: `policy check --for proxy`
//! agrees with the proxy's loader, `policy check --for controller` with the controller's import,
//! and the table states what each reads (which spec, told apart by its number of operations).

use std::path::Path;
use std::sync::Arc;

use portcullis::admin::{self, MgmtConfig};
use portcullis::cli::{CheckFor, CheckOptions, check_policy_with};
use portcullis::mgmt;

/// A spec with `n` operations under `/p<i>`.
fn spec(n: usize) -> String {
    let mut s = String::from("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n");
    for i in 0..n {
        s.push_str(&format!(
            "  /p{i}:\n    get:\n      responses:\n        '200': {{description: ok}}\n"
        ));
    }
    s
}

fn policy(link: &str) -> String {
    format!(
        r#"{{"policy": {{"name": "links", "template": {{"name": "POLICY_TEMPLATE_API_SECURITY"}},
            "open-api-files": [{{"link": "{link}"}}]}}}}"#
    )
}

/// What an entry point read: the operations of the spec it loaded, or `None` when it refused.
type Outcome = Option<usize>;

fn via_check(file: &Path, target: CheckFor) -> Outcome {
    let (report, ok) = check_policy_with(
        file,
        CheckOptions {
            target,
            urls: true,
            ..CheckOptions::default()
        },
    );
    ok.then(|| {
        report
            .lines()
            .find_map(|l| l.strip_suffix(" operations"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no URL table: {report}"))
    })
}

fn via_proxy(file: &Path) -> Outcome {
    let p = portcullis::proxy::load_policy(file).ok()?;
    Some(p.api().map_or(0, |a| a.operations.len()))
}

fn via_controller(st: &admin::MgmtState, file: &Path) -> Outcome {
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file).expect("policy")).expect("json");
    let base = "file:///var/config/rest/downloads/policy.json";
    let (loaded, _) = mgmt::asm::compile_fetching(st, &doc, base).ok()?;
    Some(loaded.policy.api().map_or(0, |a| a.operations.len()))
}

#[test]
fn policy_check_proxy_and_controller_read_each_link_form_alike() {
    let data = tempfile::tempdir().expect("data");
    let outside = tempfile::tempdir().expect("outside");
    let dl = data.path().join("downloads");
    std::fs::create_dir_all(&dl).expect("mkdir");
    // One operation inside the downloads directory, two outside the data directory, three in
    // the data directory above the downloads.
    std::fs::write(dl.join("inside.yaml"), spec(1)).expect("inside");
    std::fs::write(outside.path().join("outside.yaml"), spec(2)).expect("outside");
    std::fs::write(data.path().join("up.yaml"), spec(3)).expect("up");
    std::os::unix::fs::symlink(
        outside.path().join("outside.yaml"),
        dl.join("out-link.yaml"),
    )
    .expect("symlink out");
    std::os::unix::fs::symlink(dl.join("inside.yaml"), dl.join("in-link.yaml"))
        .expect("symlink in");
    let st = mgmt::open(
        MgmtConfig {
            data_dir: data.path().to_path_buf(),
            ..MgmtConfig::default()
        },
        Arc::new(mgmt::DetachedTopology),
        Some("Links-pass-1".into()),
    )
    .expect("controller")
    .0;
    let abs_inside = format!("file://{}", dl.join("inside.yaml").display());
    let abs_outside = format!("file://{}", outside.path().join("outside.yaml").display());
    // link, (proxy reads, controller reads)
    let table: &[(&str, Outcome, Outcome)] = &[
        ("inside.yaml", Some(1), Some(1)),
        ("file://inside.yaml", Some(1), Some(1)),
        (
            "file:///var/config/rest/downloads/inside.yaml",
            None,
            Some(1),
        ),
        (&abs_inside, Some(1), Some(1)),
        (&abs_outside, Some(2), None),
        ("../up.yaml", Some(3), None),
        ("file://../up.yaml", Some(3), None),
        ("out-link.yaml", Some(2), None),
        ("in-link.yaml", Some(1), Some(1)),
    ];
    let file = dl.join("policy.json");
    for (link, proxy_reads, controller_reads) in table {
        std::fs::write(&file, policy(link)).expect("policy");
        let row = [
            via_check(&file, CheckFor::Proxy),
            via_proxy(&file),
            via_check(&file, CheckFor::Controller),
            via_controller(&st, &file),
        ];
        assert_eq!(
            row,
            [
                *proxy_reads,
                *proxy_reads,
                *controller_reads,
                *controller_reads
            ],
            "{link}: [check --for proxy, proxy, check --for controller, controller]"
        );
    }
}
