//! The iControl SOAP portal over real HTTPS, driven with the envelopes bigsuds sends: the 401
//! challenge, WSDL, zone and record methods, nested-array responses, faults, atomicity.

use crate::support::soap::*;

const PORTAL: &str = "/iControl/iControlPortal.cgi";
const SOA: &str = "example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 2024010101 10800 3600 604800 86400";
const NS: &str = "example.com. 3600 IN NS ns1.example.com.";

fn assert_fault(r: &SoapReply, method: &str, needle: &str) {
    assert_eq!(r.status, 500, "{}", r.body);
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/xml")
    );
    assert!(r.body.contains("<E:Fault><faultcode>E:"), "{}", r.body);
    assert!(r.body.contains(&format!("::{method}()")), "{}", r.body);
    assert!(r.body.contains(needle), "expected {needle:?} in {}", r.body);
}

/// A portal serving the zone `example.com.` with its SOA and NS records.
async fn with_example_zone() -> Harness {
    let h = Harness::start().await;
    let r = h.call(&add_zone("example.com.", &[SOA, NS])).await;
    assert_eq!(r.status, 200, "{}", r.body);
    h
}

#[tokio::test]
async fn credential_less_requests_get_the_basic_challenge() {
    let h = Harness::start().await;
    for (method, path) in [
        ("GET", format!("{PORTAL}?WSDL=Management.Zone")),
        ("POST", PORTAL.to_string()),
    ] {
        let r = h.request(method, &path, None, "").await;
        assert_eq!(r.status, 401);
        assert_eq!(r.headers["www-authenticate"], "Basic realm=\"BIG-IP\"");
        let r = h.request(method, &path, Some((USER, "wrong")), "").await;
        assert_eq!(r.status, 401, "a bad password is challenged again");
    }
    let r = h
        .request(
            "GET",
            &format!("{PORTAL}?WSDL=Management.ResourceRecord"),
            Some((USER, PASSWORD)),
            "",
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(r.body.contains(
        r#"<definitions name="Management.ResourceRecord" targetNamespace="urn:iControl""#
    ));
    assert!(r.body.contains(
        r#"<soap:body use="encoded" namespace="urn:iControl:Management/ResourceRecord""#
    ));
    let r = h
        .request(
            "GET",
            &format!("{PORTAL}?WSDL=System.Nope"),
            Some((USER, PASSWORD)),
            "",
        )
        .await;
    assert_eq!(r.status, 404);
    let page = h
        .request("GET", PORTAL, Some((USER, PASSWORD)), "")
        .await
        .body;
    assert!(
        page.contains(r#"href="/iControl/iControlPortal.cgi?WSDL=Management.Zone""#),
        "{page}"
    );
    assert!(page.contains(r#"href="/iControl/iControlPortal.cgi?WSDL=Management.ResourceRecord""#));
}

#[tokio::test]
async fn zone_methods_answer_with_strictly_typed_arrays() {
    let h = Harness::start().await;
    let r = h.call(&add_zone("example.com.", &[SOA, NS])).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body
            .contains(r#"<m:add_zone_textResponse xmlns:m="urn:iControl:Management/Zone"/>"#),
        "{}",
        r.body
    );

    let r = h
        .call(&zone_method("zone_exist", &["example.com.", "other.com."]))
        .await;
    assert_eq!(r.status, 200);
    assert!(r.body.contains(r#"<return s:type="A:Array" A:arrayType="y:boolean[2]"><item s:type="y:boolean">1</item><item s:type="y:boolean">0</item></return>"#), "{}", r.body);

    let r = h.call(&zone_method("get_zone_v2", &["example.com."])).await;
    assert!(r.body.contains(r#"<return s:type="A:Array" A:arrayType="iControl:Management.ZoneInfo[1]"><item><view_name s:type="y:string">external</view_name><zone_name s:type="y:string">example.com.</zone_name><zone_type s:type="iControl:Management.ZoneType">MASTER</zone_type><zone_file s:type="y:string">db.external.example.com.</zone_file><option_seq A:arrayType="y:string[0]"/></item></return>"#), "{}", r.body);

    let rrs = h.rrs("example.com.").await;
    assert!(rrs.contains(&format!(r#"<return s:type="A:Array" A:arrayType="y:string[][1]"><item A:arrayType="y:string[2]"><item s:type="y:string">{SOA}</item><item s:type="y:string">{NS}</item></item></return>"#)), "{rrs}");

    let r = h.call(&add_zone("example.com.", &[])).await;
    assert_fault(&r, "add_zone_text", "already exists");

    let r = h.call(&zone_method("delete_zone", &["example.com."])).await;
    assert_eq!(r.status, 200);
    let r = h.call(&zone_method("get_zone_v2", &["example.com."])).await;
    assert_fault(
        &r,
        "get_zone_v2",
        "primary_error_code   : 16908342 (0x01020036)",
    );
    assert!(
        r.body.contains(
            "Exception caught in Management::urn:iControl:Management/Zone::get_zone_v2()"
        )
    );
}

#[tokio::test]
async fn add_a_as_bigsuds_sends_it_then_update_and_delete() {
    let h = with_example_zone().await;
    let www = [("www.example.com.", "10.0.0.1", 300)];
    let add = add_a(&["example.com."], &[&www], Some("False"));
    let r = h.call(&add).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body
            .contains(r#"<m:add_aResponse xmlns:m="urn:iControl:Management/ResourceRecord"/>"#)
    );

    let rrs = h.rrs("example.com.").await;
    assert!(
        rrs.contains("<item s:type=\"y:string\">www.example.com. 300 IN A 10.0.0.1</item>"),
        "{rrs}"
    );
    assert!(rrs.contains("2024010102 10800"), "serial bumped: {rrs}");

    let new = [("www.example.com.", "10.0.0.2", 60)];
    let upd = update_a(&www, &new);
    assert_eq!(h.call(&upd).await.status, 200);
    let rrs = h.rrs("example.com.").await;
    assert!(
        rrs.contains("www.example.com. 60 IN A 10.0.0.2") && !rrs.contains("10.0.0.1"),
        "{rrs}"
    );

    // the old record is gone now: updating it again is a fault
    assert_fault(&h.call(&upd).await, "update_a", "was not found");
    let del = envelope(
        RR_NS,
        "delete_a",
        &format!(
            "{}{}{}",
            view_zones(&["example.com."]),
            a_records("a_records", &[&new]),
            sync_ptrs("true")
        ),
    );
    assert_eq!(h.call(&del).await.status, 200);
    let rrs = h.rrs("example.com.").await;
    assert!(!rrs.contains("www.example.com."), "{rrs}");
    assert!(rrs.contains("A:arrayType=\"y:string[2]\""), "{rrs}");
}

#[tokio::test]
async fn bad_input_is_a_fault_and_changes_nothing() {
    let h = with_example_zone().await;
    let before = h.rrs("example.com.").await;

    // two zones, the second missing: the first must not change either
    let ok = [("a.example.com.", "10.0.0.7", 60)];
    let env = add_a(
        &["example.com.", "missing.com."],
        &[&ok, &[("a.missing.com.", "10.0.0.8", 60)]],
        Some("0"),
    );
    assert_fault(
        &h.call(&env).await,
        "add_a",
        "(view external, zone missing.com.) was not found",
    );
    for (rec, needle) in [
        (
            ("x.example.com.", "10.0.0.256", 60),
            "is not an IPv4 address",
        ),
        (("bad!.example.com.", "10.0.0.1", 60), "invalid domain name"),
        (
            ("x.example.com.", "10.0.0.1", 4_294_967_295),
            "TTL 4294967295 is outside",
        ),
        (
            ("x.other.com.", "10.0.0.1", 60),
            "outside zone example.com.",
        ),
    ] {
        let env = add_a(&["example.com."], &[&[rec]], Some("0"));
        assert_fault(&h.call(&env).await, "add_a", needle);
    }
    let bad_bool = add_a(&["example.com."], &[&ok], Some("maybe"));
    assert_fault(&h.call(&bad_bool).await, "add_a", "is not a boolean");
    let mismatch = add_a(&["example.com."], &[&ok, &ok], None);
    assert_fault(
        &h.call(&mismatch).await,
        "add_a",
        "a_records has 2 entries but 1 zones",
    );
    assert_fault(
        &h.call(&add_zone("bad zone.", &[])).await,
        "add_zone_text",
        "invalid domain name",
    );
    assert_fault(
        &h.call(&add_zone("x.com.", &["x.com. 60 IN A 1.2.3"])).await,
        "add_zone_text",
        "not an IPv4 address",
    );

    let after = h.rrs("example.com.").await;
    assert_eq!(before, after, "failed calls changed nothing");

    let r = h.call("<not-soap/>").await;
    assert_eq!(r.status, 500);
    assert!(
        r.body.contains("<faultcode>E:Client</faultcode>")
            && r.body.contains("not a SOAP 1.1 Envelope"),
        "{}",
        r.body
    );
    let r = h.call(&zone_method("rename_zone", &["example.com."])).await;
    assert_fault(
        &r,
        "rename_zone",
        "Method Management.Zone.rename_zone is not implemented",
    );
}

#[tokio::test]
async fn lenient_parsing_accepts_other_prefixes_item_names_and_booleans() {
    let h = with_example_zone().await;
    // default namespaces, `item` names, arrayType present, `1` boolean, entities
    let env = r#"<?xml version="1.0"?>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:enc="http://schemas.xmlsoap.org/soap/encoding/">
 <soap:Body>
  <add_a xmlns="urn:iControl:Management/ResourceRecord">
   <view_zones enc:arrayType="x:ViewZone[1]"><item><view_name>external</view_name><zone_name>EXAMPLE.com.</zone_name></item></view_zones>
   <a_records><item><item><domain_name>w&#120;.example.com.</domain_name><ip_address> 10.0.0.9 </ip_address><ttl>30</ttl></item></item></a_records>
   <sync_ptrs><item>1</item></sync_ptrs>
  </add_a>
 </soap:Body>
</soap:Envelope>"#;
    let r = h.call(env).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let rrs = h.rrs("example.com.").await;
    assert!(rrs.contains("wx.example.com. 30 IN A 10.0.0.9"), "{rrs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_all_apply_and_persist() {
    let h = std::sync::Arc::new(with_example_zone().await);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let h = h.clone();
        tasks.push(tokio::spawn(async move {
            let name = format!("host{i}.example.com.");
            let ip = format!("10.0.1.{i}");
            let env = add_a(&["example.com."], &[&[(&name, &ip, 60)]], None);
            h.call(&env).await.status
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), 200);
    }
    let rrs = h.rrs("example.com.").await;
    for i in 0..8 {
        assert!(
            rrs.contains(&format!("host{i}.example.com. 60 IN A 10.0.1.{i}")),
            "{rrs}"
        );
    }
    assert!(
        rrs.contains("2024010109 10800"),
        "one serial bump per call: {rrs}"
    );
    // what the store holds is what a restarted server serves
    let reloaded = portcullis::dns::ZoneCatalog::load(&h.store)
        .unwrap()
        .snapshot();
    let zone = &reloaded["external/example.com."];
    assert_eq!(zone.records.len(), 10);
}

#[tokio::test]
async fn session_identifier_is_a_positive_long() {
    let h = Harness::start().await;
    let r = h
        .call(&envelope(
            "urn:iControl:System/Session",
            "get_session_identifier",
            "",
        ))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let start = r
        .body
        .find(r#"<return s:type="y:long">"#)
        .expect("a long return")
        + 24;
    let end = start + r.body[start..].find('<').unwrap();
    assert!(r.body[start..end].parse::<i64>().unwrap() > 0, "{}", r.body);
    let r = h
        .call(&envelope(
            "urn:iControl:System/Session",
            "start_transaction",
            "",
        ))
        .await;
    assert_fault(&r, "start_transaction", "is not implemented");
}
