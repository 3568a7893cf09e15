//! The SOAP portal and DNS side of the tests: the SOAP portal served over real
//! HTTPS on loopback (self-signed certificate) plus the DNS listener, both on a temporary store,
//! and a minimal HTTPS client that trusts exactly that certificate.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use portcullis::dns::{DnsServer, ZoneCatalog};
use portcullis::soap::{self, SoapState};
use portcullis::store::Store;

pub const USER: &str = "admin";
pub const PASSWORD: &str = "s3cret";

pub struct Harness {
    pub https: SocketAddr,
    pub dns: SocketAddr,
    pub store: Arc<Store>,
    tls: Arc<rustls::ClientConfig>,
    stop: tokio::sync::watch::Sender<bool>,
    _dir: tempfile::TempDir,
}

pub struct SoapReply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: String,
}

impl Harness {
    pub async fn start() -> Harness {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let zones = ZoneCatalog::load(&store).unwrap();
        let auth: soap::Authenticator =
            Arc::new(|u, p, _| (u == USER && p == PASSWORD).then_some(soap::Access::ReadWrite));
        let state = SoapState::new(store.clone(), zones.clone(), auth);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let https = listener.local_addr().unwrap();
        let dns = DnsServer::bind("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let dns_addr = dns.local_addr().unwrap();
        let (server_tls, der) = soap::self_signed_tls(&["localhost"]).unwrap();
        let (stop, rx) = tokio::sync::watch::channel(false);
        let wait = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|v| *v).await;
        };
        tokio::spawn(soap::serve_https(
            listener,
            server_tls,
            soap::router(state),
            wait(rx.clone()),
        ));
        tokio::spawn(dns.run(zones, wait(rx)));
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(rustls_pki_types::CertificateDer::from(der))
            .unwrap();
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        Harness {
            https,
            dns: dns_addr,
            store,
            tls: Arc::new(tls),
            stop,
            _dir: dir,
        }
    }

    /// One HTTPS request on a fresh connection (as suds does, `Connection: close`).
    pub async fn request(
        &self,
        method: &str,
        path: &str,
        auth: Option<(&str, &str)>,
        body: &str,
    ) -> SoapReply {
        let tcp = tokio::net::TcpStream::connect(self.https).await.unwrap();
        let conn = tokio_rustls::TlsConnector::from(self.tls.clone());
        let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
        let tls = conn.connect(name, tcp).await.unwrap();
        let (mut send, c) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .unwrap();
        tokio::spawn(c);
        let mut req = http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost")
            .header("connection", "close")
            .header("content-type", "text/xml; charset=utf-8")
            .header("soapaction", "\"urn:iControl:Management/Zone\"");
        if let Some((u, p)) = auth {
            use base64::Engine as _;
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
            req = req.header("authorization", format!("Basic {token}"));
        }
        let res = send
            .send_request(req.body(Full::new(Bytes::from(body.to_string()))).unwrap())
            .await
            .unwrap();
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let body = res.into_body().collect().await.unwrap().to_bytes();
        SoapReply {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    /// The records of `zone` as `get_rrs` answers them (the response body).
    pub async fn rrs(&self, zone: &str) -> String {
        let r = self
            .call(&envelope(RR_NS, "get_rrs", &view_zones(&[zone])))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }

    /// POSTs an envelope with valid credentials.
    pub async fn call(&self, envelope: &str) -> SoapReply {
        self.request(
            "POST",
            "/iControl/iControlPortal.cgi",
            Some((USER, PASSWORD)),
            envelope,
        )
        .await
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// A request envelope exactly as bigsuds/suds writes it (prefixes ns0..ns3, Body under `ns2`).
pub fn envelope(interface_ns: &str, method: &str, params: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:SOAP-ENC="http://schemas.xmlsoap.org/soap/encoding/" xmlns:ns0="{interface_ns}" xmlns:ns1="urn:iControl" xmlns:ns2="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ns3="http://www.w3.org/2001/XMLSchema" SOAP-ENV:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><SOAP-ENV:Header/><ns2:Body><ns0:{method}>{params}</ns0:{method}></ns2:Body></SOAP-ENV:Envelope>"#
    )
}

pub const ZONE_NS: &str = "urn:iControl:Management/Zone";
pub const RR_NS: &str = "urn:iControl:Management/ResourceRecord";

pub fn view_zones(zones: &[&str]) -> String {
    let mut s = String::from(r#"<view_zones xsi:type="ns1:Management.ViewZoneSequence">"#);
    for z in zones {
        s.push_str(&format!(r#"<items xsi:type="ns1:Management.ViewZone"><view_name xsi:type="ns3:string">external</view_name><zone_name xsi:type="ns3:string">{z}</zone_name></items>"#));
    }
    s.push_str("</view_zones>");
    s
}

pub fn a_records(param: &str, sets: &[&[(&str, &str, u32)]]) -> String {
    let mut s = format!(r#"<{param} xsi:type="ns1:Management.ARecordSequenceSequence">"#);
    for set in sets {
        s.push_str(r#"<items xsi:type="ns1:Management.ARecordSequence">"#);
        for (name, ip, ttl) in *set {
            s.push_str(&format!(r#"<items xsi:type="ns1:Management.ARecord"><domain_name xsi:type="ns3:string">{name}</domain_name><ip_address xsi:type="ns3:string">{ip}</ip_address><ttl xsi:type="ns3:long">{ttl}</ttl></items>"#));
        }
        s.push_str("</items>");
    }
    s.push_str(&format!("</{param}>"));
    s
}

pub fn sync_ptrs(v: &str) -> String {
    format!(
        r#"<sync_ptrs xsi:type="ns1:Common.BooleanSequence"><items xsi:type="ns3:boolean">{v}</items></sync_ptrs>"#
    )
}

/// A Management.Zone method whose one parameter is `view_zones` (`zone_exist`, `delete_zone`, ...).
pub fn zone_method(method: &str, zones: &[&str]) -> String {
    envelope(ZONE_NS, method, &view_zones(zones))
}

/// `add_a`: each set of A records added to the zone at its index, with `sync_ptrs` when given.
pub fn add_a(zones: &[&str], sets: &[&[(&str, &str, u32)]], sync: Option<&str>) -> String {
    let sync = sync.map(sync_ptrs).unwrap_or_default();
    let params = format!(
        "{}{}{sync}",
        view_zones(zones),
        a_records("a_records", sets)
    );
    envelope(RR_NS, "add_a", &params)
}

/// `update_a` in the `example.com.` zone: the A records `old` replaced by `new`, PTRs untouched.
pub fn update_a(old: &[(&str, &str, u32)], new: &[(&str, &str, u32)]) -> String {
    envelope(
        RR_NS,
        "update_a",
        &format!(
            "{}{}{}{}",
            view_zones(&["example.com."]),
            a_records("old_records", &[old]),
            a_records("new_records", &[new]),
            sync_ptrs("0")
        ),
    )
}

/// `add_zone_text` for one zone with its record texts.
pub fn add_zone(zone: &str, records: &[&str]) -> String {
    let mut text = String::from(
        r#"<text xsi:type="ns1:Common.StringSequenceSequence"><items xsi:type="ns1:Common.StringSequence">"#,
    );
    for r in records {
        text.push_str(&format!(r#"<items xsi:type="ns3:string">{r}</items>"#));
    }
    text.push_str("</items></text>");
    envelope(
        ZONE_NS,
        "add_zone_text",
        &format!(
            r#"<zone_records xsi:type="ns1:Management.ZoneInfoSequence"><items xsi:type="ns1:Management.ZoneInfo"><view_name xsi:type="ns3:string">external</view_name><zone_name xsi:type="ns3:string">{zone}</zone_name><zone_type xsi:type="ns1:Management.ZoneType">MASTER</zone_type><zone_file xsi:type="ns3:string">db.external.{zone}</zone_file><option_seq xsi:type="ns1:Common.StringSequence"/></items></zone_records>{text}{}"#,
            sync_ptrs("False")
        ),
    )
}
