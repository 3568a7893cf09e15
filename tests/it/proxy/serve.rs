//! A virtual server and pool created through `/mgmt` on the real `portcullis serve` binary carry
//! traffic to the pool member; deleting the virtual stops its listener.

use std::time::Duration;

use reqwest::Method;

use crate::support::mgmt::{Api, get, start, virtual_server};

#[tokio::test]
async fn a_virtual_and_pool_created_over_rest_serve_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let port = virtual_server(&api).await;
    let (s, b) = api.req(Method::GET, "/mgmt/tm/ltm/virtual/vs", None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["destination"], format!("/Common/127.0.0.1:{port}"));
    assert_eq!(b["pool"], "/Common/web");

    let url = format!("http://127.0.0.1:{port}/anything");
    let mut last = None;
    for _ in 0..50 {
        match get(&url).await {
            Ok(r) => {
                last = Some(r);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert_eq!(last, Some((200, "hello from upstream".to_string())));

    let (s, _) = api
        .req(Method::DELETE, "/mgmt/tm/ltm/virtual/vs", None)
        .await;
    assert_eq!(s, 200);
    let mut stopped = false;
    for _ in 0..50 {
        if get(&url).await.is_err() {
            stopped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        stopped,
        "the listener of a deleted virtual server keeps answering"
    );
}
