//! The help texts a new user reads: every command's `--help` through the real binary, checked for
//! what it must say (defaults, the admin API of the demo, what `billing-report mask` does) and
//! for references to documents users do not have.

use std::process::Command;

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(args)
        .arg("--help")
        .output()
        .expect("portcullis");
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn help_texts_state_defaults_and_cite_no_outside_documents() {
    let commands: &[&[&str]] = &[
        &[],
        &["proxy"],
        &["demo"],
        &["serve"],
        &["central"],
        &["billing-report"],
        &["billing-report", "mask"],
        &["policy", "check"],
        &["access", "check"],
    ];
    for args in commands {
        let text = help(args);
        assert!(
            !text.contains("(spec") && !text.contains("spec 4"),
            "{args:?} cites the spec:\n{text}"
        );
    }
    assert!(help(&["demo"]).contains("admin API"));
    assert!(help(&["demo"]).contains("[default: 127.0.0.1:8443]"));
    assert!(help(&["proxy"]).contains("--workers <WORKERS>"));
    assert!(help(&["proxy"]).contains("[default: one per CPU core]"));
    let serve = help(&["serve"]);
    assert!(serve.contains("[default: ./portcullis-data]"), "{serve}");
    assert!(serve.contains("[default: 127.0.0.1:8443]"), "{serve}");
    assert!(help(&["central"]).contains("[default: 127.0.0.1:9443]"));
    let mask = help(&["billing-report", "mask"]);
    let file_line = mask
        .lines()
        .find(|l| l.trim_start().starts_with("<FILE>"))
        .expect("FILE argument");
    assert!(
        file_line.trim_start().len() > "<FILE>".len(),
        "FILE is not described:\n{mask}"
    );
    assert!(help(&["policy", "check"]).contains("--for <COMMAND>"));
}
