//! The service and pool classes of an AS3 application: Service_HTTP, Service_HTTPS (with
//! `redirect80`, `profileTCP` ingress/egress, `policyWAF`, `securityLogProfiles`) and Pool
//! (monitors, members). Pure: no IO.

use std::net::IpAddr;

use serde_json::Value;

use super::classes::{Member, Pool, Ptr, Service, pointer};
use super::props::{Errors, Props};

fn tcp_choice(p: &Props<'_>, prop: &str, v: &Value, errs: &mut Errors) -> Option<Ptr> {
    match v.as_str() {
        Some("normal") => Some(Ptr::builtin(prop, "/Common/tcp")),
        Some("wan") => Some(Ptr::builtin(prop, "/Common/f5-tcp-wan")),
        Some("lan") => Some(Ptr::builtin(prop, "/Common/f5-tcp-lan")),
        Some(_) => {
            errs.push(
                &p.at(prop),
                "should be normal, wan, lan, {\"use\": name} or {\"bigip\": path}",
            );
            None
        }
        None => pointer(p, prop, v, &["TCP_Profile"], errs),
    }
}

pub fn service(p: &Props<'_>, https: bool, errs: &mut Errors) -> Service {
    let mut allowed = vec![
        "virtualAddresses",
        "virtualPort",
        "pool",
        "policyWAF",
        "securityLogProfiles",
        "profileTCP",
        "profileHTTP",
        "enable",
        "snat",
    ];
    if https {
        allowed.extend(["serverTLS", "redirect80", "redirectPort"]);
    }
    p.only(&allowed, errs);
    let mut addresses = Vec::new();
    match p.array("virtualAddresses", errs) {
        None if !p.map.contains_key("virtualAddresses") => {
            errs.push(&p.path, "should have required property 'virtualAddresses'")
        }
        None => {}
        Some(a) if a.is_empty() => errs.push(
            &p.at("virtualAddresses"),
            "should NOT have fewer than 1 items",
        ),
        Some(a) => {
            for (i, v) in a.iter().enumerate() {
                let ok = v.as_str().filter(|s| {
                    let (ip, rd) = s.split_once('%').map_or((*s, None), |(a, r)| (a, Some(r)));
                    ip.parse::<IpAddr>().is_ok() && rd.is_none_or(|r| r.parse::<u16>().is_ok())
                });
                match ok {
                    Some(s) => addresses.push(s.to_string()),
                    None => errs.push(
                        &format!("{}/{i}", p.at("virtualAddresses")),
                        "should be an IP address (optionally %route-domain)",
                    ),
                }
            }
        }
    }
    let port = p.int("virtualPort", if https { 443 } else { 80 }, 0, 65535, errs) as u16;
    let redirect = (https && p.bool("redirect80", true, errs))
        .then(|| p.int("redirectPort", 80, 1, 65535, errs) as u16);
    let pool = p
        .map
        .get("pool")
        .and_then(|v| pointer(p, "pool", v, &["Pool"], errs));
    let waf = p
        .map
        .get("policyWAF")
        .and_then(|v| pointer(p, "policyWAF", v, &["WAF_Policy"], errs));
    let mut log_profiles = Vec::new();
    for (i, v) in p
        .array("securityLogProfiles", errs)
        .into_iter()
        .flatten()
        .enumerate()
    {
        log_profiles.extend(pointer(
            p,
            &format!("securityLogProfiles/{i}"),
            v,
            &["Security_Log_Profile"],
            errs,
        ));
    }
    let normal = || Ptr::builtin("profileTCP", "/Common/tcp");
    let (tcp_client, tcp_server) = match p.map.get("profileTCP") {
        None => (normal(), normal()),
        Some(Value::Object(o)) if o.contains_key("ingress") || o.contains_key("egress") => {
            let sub = Props::new(p.at("profileTCP"), o);
            sub.only(&["ingress", "egress"], errs);
            let side = |k: &str, errs: &mut Errors| match o.get(k) {
                None => Some(normal()),
                Some(v) => tcp_choice(&sub, k, v, errs),
            };
            let c = side("ingress", errs).unwrap_or_else(normal);
            let s = side("egress", errs).unwrap_or_else(normal);
            let fix = |mut x: Ptr, k: &str| {
                x.prop = format!("profileTCP/{k}");
                x
            };
            (fix(c, "ingress"), fix(s, "egress"))
        }
        Some(v) => {
            let x = tcp_choice(p, "profileTCP", v, errs).unwrap_or_else(normal);
            (x.clone(), x)
        }
    };
    let http = match p.map.get("profileHTTP") {
        None => Ptr::builtin("profileHTTP", "/Common/http"),
        Some(Value::String(s)) if s == "basic" => Ptr::builtin("profileHTTP", "/Common/http"),
        Some(v) => pointer(p, "profileHTTP", v, &["HTTP_Profile"], errs)
            .unwrap_or_else(|| Ptr::builtin("profileHTTP", "/Common/http")),
    };
    let tls = if https {
        match p.map.get("serverTLS") {
            Some(v) => pointer(p, "serverTLS", v, &["TLS_Server"], errs),
            None => {
                errs.push(&p.path, "should have required property 'serverTLS'");
                None
            }
        }
    } else {
        None
    };
    let snat = p.choice("snat", "auto", &["auto", "none"], errs) == "auto";
    Service {
        https,
        addresses,
        port,
        redirect,
        pool,
        waf,
        log_profiles,
        tcp_client,
        tcp_server,
        http,
        tls,
        enabled: p.bool("enable", true, errs),
        snat,
    }
}

pub fn pool(p: &Props<'_>, errs: &mut Errors) -> Pool {
    p.only(
        &[
            "monitors",
            "members",
            "minimumMonitors",
            "loadBalancingMode",
        ],
        errs,
    );
    let mut monitors = Vec::new();
    for (i, v) in p.array("monitors", errs).into_iter().flatten().enumerate() {
        let prop = format!("monitors/{i}");
        match v.as_str() {
            Some(m @ ("http" | "https" | "tcp")) => {
                monitors.push(Ptr::builtin(&prop, &format!("/Common/{m}")))
            }
            Some(m) => errs.push(
                &p.at(&prop),
                format!("monitor {m} is not supported (http, https, tcp, {{\"use\": Monitor}} or {{\"bigip\": path}})"),
            ),
            None => monitors.extend(pointer(p, &prop, v, &["Monitor"], errs)),
        }
    }
    let min_monitors = match p.map.get("minimumMonitors") {
        Some(Value::String(s)) if s == "all" => None,
        _ => Some(p.int("minimumMonitors", 1, 1, 63, errs) as u64),
    };
    let lb_mode = p.choice(
        "loadBalancingMode",
        "round-robin",
        &[
            "round-robin",
            "least-connections-member",
            "ratio-member",
            "predictive-member",
            "observed-member",
        ],
        errs,
    );
    let mut members = Vec::new();
    for (i, v) in p.array("members", errs).into_iter().flatten().enumerate() {
        let at = format!("{}/{i}", p.at("members"));
        let Value::Object(mm) = v else {
            errs.push(&at, "should be object");
            continue;
        };
        let mp = Props::new(at.clone(), mm);
        mp.only(
            &[
                "servicePort",
                "serverAddresses",
                "enable",
                "adminState",
                "shareNodes",
                "addressDiscovery",
            ],
            errs,
        );
        mp.choice("addressDiscovery", "static", &["static"], errs);
        mp.bool("shareNodes", false, errs);
        if !mm.contains_key("servicePort") {
            errs.push(&at, "should have required property 'servicePort'");
        }
        let port = mp.int("servicePort", 80, 0, 65535, errs) as u16;
        let admin = mp.choice(
            "adminState",
            "enable",
            &["enable", "disable", "offline"],
            errs,
        );
        let enabled = mp.bool("enable", true, errs) && admin == "enable";
        for (j, a) in mp
            .array("serverAddresses", errs)
            .into_iter()
            .flatten()
            .enumerate()
        {
            match a.as_str().filter(|s| {
                s.split('%')
                    .next()
                    .unwrap_or_default()
                    .parse::<IpAddr>()
                    .is_ok()
            }) {
                Some(s) => members.push(Member {
                    address: s.to_string(),
                    port,
                    enabled,
                }),
                None => errs.push(
                    &format!("{at}/serverAddresses/{j}"),
                    "should be an IP address",
                ),
            }
        }
    }
    Pool {
        monitors,
        min_monitors,
        members,
        lb_mode,
    }
}
