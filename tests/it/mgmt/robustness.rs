//! Robustness of the router: randomized hostile requests must all get an answer (2xx or a 4xx
//! error object), never a panic. In-process, no sockets. (The fuzz seed corpus replays through
//! `mgmt::fuzz_request` in the library's unit tests: that entry point is not built for this crate.)

use std::sync::Arc;

use portcullis::admin::{self, MgmtConfig};
use portcullis::mgmt;

use crate::support::router::{ROUTER_PASS, call_raw};

fn open(dir: &std::path::Path, pw: &str) -> Arc<admin::MgmtState> {
    let cfg = MgmtConfig {
        data_dir: dir.to_path_buf(),
        ..Default::default()
    };
    mgmt::open(cfg, Arc::new(mgmt::DetachedTopology), Some(pw.into()))
        .unwrap()
        .0
}

/// A cheap stand-in for the fuzzer on stable: thousands of random requests built from the API's
/// own vocabulary (paths, names with `../`, long and non-ASCII names, malformed and mistyped
/// JSON, odd queries) must each get an answer: 2xx, or an error object with a 4xx status.
#[tokio::test]
async fn random_requests_get_answers_never_panics() {
    use rand::RngExt as _;
    let dir = tempfile::tempdir().unwrap();
    let app = admin::router(open(dir.path(), ROUTER_PASS));
    let colls = [
        "/mgmt/tm/ltm/pool",
        "/mgmt/tm/ltm/virtual",
        "/mgmt/tm/ltm/node",
        "/mgmt/tm/ltm/rule",
        "/mgmt/tm/ltm/data-group/internal",
        "/mgmt/tm/ltm/profile/client-ssl",
        "/mgmt/tm/ltm/monitor/http",
        "/mgmt/tm/sys/file/ifile",
        "/mgmt/tm/sys/crypto/cert",
        "/mgmt/tm/auth/user",
        "/mgmt/tm/transaction",
        "/mgmt/shared/authz/tokens",
        "/mgmt/tm/util/bash",
        "/mgmt/tm",
        "/mgmt/tm/sys/license",
        "/mgmt/shared/file-transfer/uploads",
        "/mgmt/tm/cm/device-group",
    ];
    let names = [
        "p",
        "~Common~p",
        "~A~b~c",
        "..%2f..%2fetc",
        "caf%C3%A9",
        "%FF%FE",
        "x".repeat(300).leak(),
        "~Common~p/members",
        "~Common~p/members/~Common~10.0.0.1:80",
        "~",
        "",
    ];
    let queries = [
        "",
        "?$filter=name%20eq%20'p*'",
        "?$filter=((((",
        "?$top=x",
        "?options=records%20add%20%7B%20k%20%7D",
        "?expandSubcollections=true&$select=name",
        "?options=*",
    ];
    let bodies = [
        "",
        "{",
        "[]",
        "null",
        "\"x\"",
        "{\"name\":5}",
        "{\"name\":\"p\"}",
        "{\"name\":\"p\",\"members\":\"x\"}",
        "{\"name\":\"p\",\"members\":[{\"name\":\"10.0.0.1:80\"}]}",
        "{\"name\":\"v\",\"destination\":\"1.2.3.4:80\",\"pool\":\"p\"}",
        "{\"name\":\"../x\"}",
        "{\"name\":\"d\",\"records\":[{\"name\":1}]}",
        "{\"timeout\":-1}",
        "{\"command\":\"run\",\"utilCmdArgs\":7}",
        "{\"name\":\"u\",\"password\":\"p\",\"role\":\"king\"}",
        "{\"state\":\"VALIDATING\"}",
        "{\"sourcePath\":\"file:/etc/passwd\",\"name\":\"f\"}",
        "{\"profilesReference\":{\"items\":[{\"name\":7}]}}",
        "{\"metadata\":{}}",
    ];
    let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
    let mut rng = rand::rng();
    for _ in 0..1500 {
        let c = colls[rng.random_range(0..colls.len())];
        let path = match rng.random_range(0..3) {
            0 => c.to_string(),
            _ => format!("{c}/{}", names[rng.random_range(0..names.len())]),
        };
        let uri = format!("{path}{}", queries[rng.random_range(0..queries.len())]);
        let m = methods[rng.random_range(0..methods.len())];
        let body = bodies[rng.random_range(0..bodies.len())];
        let (s, b) = call_raw(&app, m, &uri, Some(body.to_string())).await;
        assert!(
            s.is_success() || s.is_client_error(),
            "{m} {uri} {body} -> {s} {b}"
        );
        if !s.is_success() {
            let e = if b.is_array() { &b[0] } else { &b };
            assert_eq!(e["code"], s.as_u16(), "{m} {uri} {body} -> {b}");
            assert_eq!(e["kind"], ":resterrorresponse");
        }
    }
}
