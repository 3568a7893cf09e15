//! `portcullis demo` as a new user meets it: the real binary on free ports, and every command its
//! banner prints run by a shell exactly as printed (the admin example included), each answer
//! checked for what the banner promises. Then what the demo leaves: JSON event lines on stdout,
//! plain logs on stderr, and no temporary directory once it stopped or failed to start.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value;

use crate::support::free_port;

fn demo(listen: u16, admin: u16, tmp: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_portcullis"));
    cmd.args(["demo", "--listen", &format!("127.0.0.1:{listen}")])
        .args(["--admin-listen", &format!("127.0.0.1:{admin}")])
        .env("TMPDIR", tmp)
        .env_remove("PORTCULLIS_ADMIN_PASSWORD")
        .env_remove("RUST_LOG");
    cmd
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("tmp")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

struct Running {
    child: Child,
    banner: Vec<String>,
    /// Lines printed on stdout after the banner (the security events).
    events: Arc<Mutex<Vec<String>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(listen: u16, admin: u16, tmp: &Path, stderr: &Path) -> Running {
    let mut child = demo(listen, admin, tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(stderr).expect("log")))
        .spawn()
        .expect("spawn portcullis demo");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut banner = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no banner: {banner:?}");
        let Some(line) = lines.next() else {
            panic!(
                "demo exited: {}",
                std::fs::read_to_string(stderr).unwrap_or_default()
            );
        };
        let line = line.expect("line");
        let done = line.starts_with("Ctrl-C stops the demo");
        banner.push(line);
        if done {
            break;
        }
    }
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    std::thread::spawn(move || {
        for l in lines.map_while(Result::ok) {
            sink.lock().push(l);
        }
    });
    Running {
        child,
        banner,
        events,
    }
}

/// The shell commands of the banner: its indented lines that run a program.
fn commands(banner: &[String], grpcurl: bool) -> Vec<String> {
    banner
        .iter()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| {
            l.starts_with("curl ") || l.starts_with("id=") || (grpcurl && l.starts_with("grpcurl "))
        })
        .map(str::to_string)
        .collect()
}

/// Runs the commands in one shell (so `id=$(...)` carries over), in the repository (the
/// grpcurl example names `policies/demo/demo.proto`); returns each command's output.
fn run_all(cmds: &[String]) -> Vec<String> {
    let mut script = String::new();
    for (i, c) in cmds.iter().enumerate() {
        // Events reach the store from a background writer a few milliseconds after the block
        // reply, so the event lookup that follows a block at script speed is asked again, as a
        // person would, until the event is there (bounded: the assertions below still fail).
        let c = if c.contains("/events/requests/$id") {
            format!(
                "for try in 1 2 3 4 5 6 7 8 9 10; do out=$({c}); \
                 case \"$out\" in *requeststate*) break;; esac; sleep 0.5; done; printf '%s\\n' \"$out\""
            )
        } else {
            c.clone()
        };
        script.push_str(&format!("echo '<<<{i}>>>'\n{c}\necho\n"));
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("sh");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (0..cmds.len())
        .map(|i| {
            let start = text.find(&format!("<<<{i}>>>")).expect("marker") + 8;
            let end = text.find(&format!("<<<{}>>>", i + 1)).unwrap_or(text.len());
            text[start..end].trim().to_string()
        })
        .collect()
}

fn json_of(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
fn every_command_the_demo_banner_prints_works_as_it_says() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (listen, admin) = (free_port(), free_port());
    let log = tmp.path().join("stderr.log");
    let state = tmp.path().join("state");
    std::fs::create_dir(&state).expect("mkdir");
    let mut d = start(listen, admin, &state, &log);
    let grpcurl = Command::new("sh")
        .args(["-c", "command -v grpcurl"])
        .output()
        .is_ok_and(|o| o.status.success());
    let cmds = commands(&d.banner, grpcurl);
    let outs = run_all(&cmds);
    let mut block_ids = Vec::new();
    for (cmd, out) in cmds.iter().zip(&outs) {
        let ctx = format!("`{cmd}` printed:\n{out}");
        if cmd.contains("/api/users/1") {
            assert!(out.starts_with("HTTP/1.1 200"), "{ctx}");
            assert!(out.contains("Ada Lovelace"), "{ctx}");
        } else if cmd.starts_with("curl -i http") && cmd.contains("/api/admin") {
            assert!(out.starts_with("HTTP/1.1 403"), "{ctx}");
            let body = json_of(out.lines().last().unwrap_or_default());
            block_ids.push(body["supportID"].as_str().expect("supportID").to_string());
        } else if cmd.contains("/api/orders") {
            assert!(out.starts_with("HTTP/1.1 403"), "{ctx}");
            assert!(out.contains("supportID"), "{ctx}");
        } else if cmd.contains("/mgmt/tm/ltm/virtual/") {
            let v = json_of(out);
            assert_eq!(v["kind"], "tm:ltm:virtual:virtualstate", "{ctx}");
            assert_eq!(
                v["destination"],
                format!("/Common/127.0.0.1:{listen}"),
                "{ctx}"
            );
            assert_eq!(v["pool"], "/Common/demo_pool", "{ctx}");
        } else if cmd.starts_with("id=") {
            assert!(out.is_empty(), "{ctx}");
        } else if cmd.contains("/mgmt/tm/asm/events/requests/$id") {
            let e = json_of(out);
            assert_eq!(e["kind"], "tm:asm:events:requests:requeststate", "{ctx}");
            assert_eq!(e["requestStatus"], "blocked", "{ctx}");
            assert_eq!(e["uri"], "/api/admin", "{ctx}");
            assert_eq!(e["virtualServerName"], "/Common/demo_vs", "{ctx}");
            assert_eq!(e["policyName"], "/Common/demo_api_policy", "{ctx}");
            block_ids.push(e["supportId"].as_str().expect("supportId").to_string());
        } else if cmd.starts_with("grpcurl") {
            assert!(out.contains("ada"), "{ctx}");
        } else if cmd.contains("demo.v1.Greeter/Nope") {
            assert!(out.contains("grpc-status: 3"), "{ctx}");
        } else {
            panic!("a banner command this test does not know: {ctx}");
        }
    }
    assert!(
        cmds.iter()
            .any(|c| c.contains("/mgmt/tm/asm/events/requests/$id")),
        "the banner shows no admin example: {:#?}",
        d.banner
    );

    // The address the banner gives for the admin API answers with where to go from there.
    let creds = d
        .banner
        .iter()
        .find_map(|l| l.split("password ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .expect("password in the banner")
        .to_string();
    let out = Command::new("curl")
        .args(["-sk", "-u", &format!("admin:{creds}")])
        .arg(format!("https://127.0.0.1:{admin}/mgmt"))
        .output()
        .expect("curl");
    let index = json_of(&String::from_utf8_lossy(&out.stdout));
    let links: Vec<&str> = index["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["reference"]["link"].as_str())
        .collect();
    assert!(
        links
            .iter()
            .any(|l| l.contains("/mgmt/tm/asm/events/requests")),
        "{index}"
    );

    // The web console the banner names answers at that address with its login page.
    let console = d
        .banner
        .iter()
        .find_map(|l| l.trim().strip_prefix("web console"))
        .and_then(|r| r.split_whitespace().next())
        .expect("console address in the banner")
        .to_string();
    assert_eq!(console, format!("https://127.0.0.1:{admin}/ui/"));
    let out = Command::new("curl")
        .args(["-skL", &console])
        .output()
        .expect("curl");
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains("<title>Log in · Portcullis</title>"),
        "{page}"
    );

    // Events: one JSON line each on stdout, camelCase, every blocked request's id among them.
    let deadline = Instant::now() + Duration::from_secs(5);
    let events: Vec<Value> = loop {
        let lines = d.events.lock().clone();
        let events: Vec<Value> = lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| json_of(l))
            .collect();
        let ids: Vec<&str> = events
            .iter()
            .filter_map(|e| e["supportId"].as_str())
            .collect();
        if block_ids.iter().all(|b| ids.contains(&b.as_str())) || Instant::now() > deadline {
            break events;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    for b in &block_ids {
        assert!(
            events.iter().any(|e| e["supportId"] == b.as_str()),
            "{b} not among {events:?}"
        );
    }
    assert!(
        events.iter().all(|e| e.get("signature_ids").is_none()
            && e["uri"].as_str().is_some_and(|u| u.starts_with('/'))),
        "{events:?}"
    );

    // Stopping: SIGTERM ends it cleanly and its temporary directory goes with it.
    assert!(
        !entries(&state).is_empty(),
        "the demo keeps its state in TMPDIR"
    );
    let ok = Command::new("kill")
        .args(["-TERM", &d.child.id().to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok);
    let status = d.child.wait().expect("wait");
    assert!(status.success(), "{status}");
    assert_eq!(entries(&state), Vec::<String>::new(), "left behind");
    let stderr = std::fs::read_to_string(&log).expect("stderr");
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes in a log file: {stderr}"
    );
    assert!(
        !stderr.contains("supportId"),
        "events among the logs: {stderr}"
    );
}

#[test]
fn a_demo_that_cannot_start_says_why_once_and_leaves_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    for (listen, admin) in [(port, free_port()), (free_port(), port)] {
        let out = demo(listen, admin, tmp.path()).output().expect("demo");
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.matches("Address already in use").count(),
            1,
            "{stderr}"
        );
        assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
        assert_eq!(entries(tmp.path()), Vec::<String>::new(), "left behind");
    }
}
