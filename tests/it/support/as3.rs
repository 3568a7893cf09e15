//! The AS3 side of the tests: the declaration builders and URL polling.

use reqwest::Method;
use serde_json::{Value, json};

use super::mgmt::Api;
use super::upstream::get_when_up;

pub const DECLARE: &str = "/mgmt/shared/appsvcs/declare";

pub fn http_app(port: u16, member: std::net::SocketAddr) -> Value {
    json!({
        "class": "Application", "template": "http",
        "serviceMain": {"class": "Service_HTTP", "virtualAddresses": ["127.0.0.1"],
                        "virtualPort": port, "pool": "web_pool", "profileHTTP": {"use": "xff"}},
        "web_pool": {"class": "Pool", "monitors": ["tcp"],
                     "members": [{"servicePort": member.port(), "serverAddresses": ["127.0.0.1"]}]},
        "xff": {"class": "HTTP_Profile", "xForwardedFor": true}
    })
}

pub fn as3(tenants: Value) -> Value {
    let mut decl = json!({"class": "ADC", "schemaVersion": "3.18.0", "id": "test-decl"});
    for (k, v) in tenants.as_object().unwrap() {
        decl[k] = v.clone();
    }
    json!({"class": "AS3", "action": "deploy", "persist": true, "declaration": decl})
}

pub async fn body_of(url: &str) -> (u16, String) {
    let r = get_when_up(url).await.expect("listener answers");
    let s = r.status().as_u16();
    (s, r.text().await.unwrap())
}

pub async fn virtual_names(api: &Api) -> Vec<String> {
    let (s, b) = api.req(Method::GET, "/mgmt/tm/ltm/virtual", None).await;
    assert_eq!(s, 200, "{b}");
    b["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["fullPath"].as_str().unwrap().to_string())
        .collect()
}
