//! Authoritative answers from a zone snapshot, pure (no sockets): query message in, response
//! message out. Covers exact matches, CNAME chains inside the served zones, wildcards, delegations
//! below the apex (referral with glue), NODATA and NXDOMAIN with the zone's SOA in the authority
//! section (TTL capped by the SOA minimum, RFC 2308), REFUSED outside the served zones.

use hickory_proto::op::{Edns, Message, MessageType, Metadata, OpCode, ResponseCode};
use hickory_proto::rr::rdata::{A, AAAA, CNAME, MX, NS, PTR, SOA, SRV, TXT};
use hickory_proto::rr::{self, DNSClass, Name, RecordType};

use super::catalog::{ZoneMap, find_zone};
use super::record::{RData, Record};
use super::zone::Zone;

/// Longest CNAME chain followed inside the served zones.
const MAX_CNAME_CHAIN: usize = 8;
/// UDP payload size we advertise and use when the client's EDNS asks for more (RFC 9715 advice).
pub const EDNS_PAYLOAD: u16 = 1232;

/// Answers one query message from the zones of `view`.
pub fn answer(zones: &ZoneMap, view: &str, req: &Message) -> Message {
    let mut resp = Message::new(req.metadata.id, MessageType::Response, req.metadata.op_code);
    resp.metadata = Metadata::response_from_request(&req.metadata);
    resp.metadata.recursion_available = false;
    if req.edns.is_some() {
        let mut e = Edns::new();
        e.set_max_payload(EDNS_PAYLOAD);
        resp.set_edns(e);
    }
    if req.metadata.op_code != OpCode::Query {
        resp.metadata.response_code = ResponseCode::NotImp;
        return resp;
    }
    let [q] = req.queries.as_slice() else {
        resp.metadata.response_code = ResponseCode::FormErr;
        return resp;
    };
    resp.add_query(q.clone());
    if !matches!(q.query_class(), DNSClass::IN | DNSClass::ANY) {
        resp.metadata.response_code = ResponseCode::Refused;
        return resp;
    }
    if matches!(q.query_type(), RecordType::AXFR | RecordType::IXFR) {
        resp.metadata.response_code = ResponseCode::Refused;
        return resp;
    }
    let qname = q.name().to_ascii().to_ascii_lowercase();
    let Some(zone) = find_zone(zones, view, &qname) else {
        resp.metadata.response_code = ResponseCode::Refused;
        return resp;
    };
    resolve(zones, view, zone, &qname, q.query_type(), &mut resp, 0);
    resp
}

fn resolve(
    zones: &ZoneMap,
    view: &str,
    zone: &Zone,
    qname: &str,
    qtype: RecordType,
    resp: &mut Message,
    depth: usize,
) {
    if depth == 0 {
        resp.metadata.authoritative = true;
    }
    // Delegation: an NS set strictly between the apex and the query name.
    if let Some(cut) = delegation(zone, qname) {
        resp.metadata.authoritative = depth > 0;
        for ns in zone
            .records
            .iter()
            .filter(|r| r.name == cut && r.data.rtype() == "NS")
        {
            resp.add_authority(to_wire(ns));
            if let RData::Ns(host) = &ns.data {
                for glue in zone
                    .records
                    .iter()
                    .filter(|g| &g.name == host && matches!(g.data, RData::A(_) | RData::Aaaa(_)))
                {
                    resp.add_additional(to_wire(glue));
                }
            }
        }
        return;
    }
    let mut at_name: Vec<Record> = zone
        .records
        .iter()
        .filter(|r| r.name == qname)
        .cloned()
        .collect();
    if at_name.is_empty() && !has_descendants(zone, qname) {
        at_name = wildcard(zone, qname);
    }
    if at_name.is_empty() && !has_descendants(zone, qname) {
        if depth == 0 {
            resp.metadata.response_code = ResponseCode::NXDomain;
        }
        add_soa(zone, resp);
        return;
    }
    if qtype != RecordType::CNAME
        && let Some(c) = at_name.iter().find(|r| matches!(r.data, RData::Cname(_)))
    {
        resp.add_answer(to_wire(c));
        if let RData::Cname(target) = &c.data
            && depth < MAX_CNAME_CHAIN
            && let Some(tz) = find_zone(zones, view, target)
        {
            resolve(zones, view, tz, target, qtype, resp, depth + 1);
        }
        return;
    }
    let hits: Vec<&Record> = at_name
        .iter()
        .filter(|r| qtype == RecordType::ANY || rtype_of(&r.data) == qtype)
        .collect();
    if hits.is_empty() {
        add_soa(zone, resp);
        return;
    }
    for r in hits {
        resp.add_answer(to_wire(r));
    }
}

/// The closest NS cut below the apex that encloses `qname`, if any.
fn delegation(zone: &Zone, qname: &str) -> Option<String> {
    let mut cut = None;
    for r in &zone.records {
        if matches!(r.data, RData::Ns(_))
            && r.name != zone.name
            && super::name::in_zone(qname, &r.name)
            && cut.as_ref().is_none_or(|c: &String| r.name.len() > c.len())
        {
            cut = Some(r.name.clone());
        }
    }
    cut
}

fn has_descendants(zone: &Zone, qname: &str) -> bool {
    let suffix = format!(".{qname}");
    qname == zone.name || zone.records.iter().any(|r| r.name.ends_with(&suffix))
}

/// Records of the closest `*.` wildcard, renamed to `qname`.
fn wildcard(zone: &Zone, qname: &str) -> Vec<Record> {
    let mut parent = qname;
    while let Some((_, rest)) = parent.split_once('.') {
        if rest.is_empty() || !super::name::in_zone(rest, &zone.name) {
            break;
        }
        let star = format!("*.{rest}");
        let found: Vec<Record> = zone
            .records
            .iter()
            .filter(|r| r.name == star)
            .map(|r| Record {
                name: qname.to_string(),
                ..r.clone()
            })
            .collect();
        if !found.is_empty() || zone.records.iter().any(|r| r.name == rest) {
            return found;
        }
        parent = rest;
    }
    Vec::new()
}

fn add_soa(zone: &Zone, resp: &mut Message) {
    if let Some((rec, soa)) = zone.soa() {
        let mut wire = to_wire(rec);
        wire.ttl = rec.ttl.min(soa.minimum);
        resp.add_authority(wire);
    }
}

fn rtype_of(d: &RData) -> RecordType {
    match d {
        RData::Soa(_) => RecordType::SOA,
        RData::Ns(_) => RecordType::NS,
        RData::A(_) => RecordType::A,
        RData::Aaaa(_) => RecordType::AAAA,
        RData::Cname(_) => RecordType::CNAME,
        RData::Ptr(_) => RecordType::PTR,
        RData::Mx { .. } => RecordType::MX,
        RData::Txt(_) => RecordType::TXT,
        RData::Srv { .. } => RecordType::SRV,
    }
}

/// Names were validated when stored, so they always convert; `.` stands in otherwise.
fn wire_name(n: &str) -> Name {
    Name::from_ascii(n).unwrap_or_else(|_| Name::root())
}

/// Converts a stored record to its wire form.
pub fn to_wire(r: &Record) -> rr::Record {
    let data = match &r.data {
        RData::Soa(s) => rr::RData::SOA(SOA::new(
            wire_name(&s.mname),
            wire_name(&s.rname),
            s.serial,
            s.refresh.min(i32::MAX as u32) as i32,
            s.retry.min(i32::MAX as u32) as i32,
            s.expire.min(i32::MAX as u32) as i32,
            s.minimum,
        )),
        RData::Ns(n) => rr::RData::NS(NS(wire_name(n))),
        RData::A(ip) => rr::RData::A(A(*ip)),
        RData::Aaaa(ip) => rr::RData::AAAA(AAAA(*ip)),
        RData::Cname(n) => rr::RData::CNAME(CNAME(wire_name(n))),
        RData::Ptr(n) => rr::RData::PTR(PTR(wire_name(n))),
        RData::Mx {
            preference,
            exchange,
        } => rr::RData::MX(MX::new(*preference, wire_name(exchange))),
        RData::Txt(parts) => rr::RData::TXT(TXT::new(parts.clone())),
        RData::Srv {
            priority,
            weight,
            port,
            target,
        } => rr::RData::SRV(SRV::new(*priority, *weight, *port, wire_name(target))),
    };
    rr::Record::from_rdata(wire_name(&r.name), r.ttl, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ZoneCatalog;
    use hickory_proto::op::Query;

    fn ask(cat: &ZoneCatalog, name: &str, t: RecordType) -> Message {
        let mut q = Message::query();
        q.add_query(Query::query(Name::from_ascii(name).unwrap(), t));
        answer(&cat.snapshot(), "external", &q)
    }

    #[test]
    fn wildcards_any_and_empty_non_terminals() {
        let texts: Vec<String> = [
            "*.w 60 IN A 192.0.2.1",
            "a.b 60 IN A 192.0.2.2",
            "a.b 60 IN TXT \"t\"",
            "x.w 60 IN AAAA 2001:db8::1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let z = Zone::create("external", "example.com.", "MASTER", "", vec![], &texts).unwrap();
        let cat = ZoneCatalog::new();
        cat.publish(vec![(z.key(), Some(z))]);

        let m = ask(&cat, "anything.w.example.com.", RecordType::A);
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert_eq!(m.answers[0].name.to_ascii(), "anything.w.example.com.");
        // an existing name is not covered by the wildcard
        let m = ask(&cat, "x.w.example.com.", RecordType::A);
        assert!(m.answers.is_empty() && m.metadata.response_code == ResponseCode::NoError);
        // b.example.com. exists only as an empty non-terminal: NODATA, not NXDOMAIN
        let m = ask(&cat, "b.example.com.", RecordType::A);
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(m.answers.is_empty() && !m.authorities.is_empty());
        let m = ask(&cat, "a.b.example.com.", RecordType::ANY);
        assert_eq!(m.answers.len(), 2);
        let mut notify = Message::query();
        notify.metadata.op_code = OpCode::Notify;
        assert_eq!(
            answer(&cat.snapshot(), "external", &notify)
                .metadata
                .response_code,
            ResponseCode::NotImp
        );
    }
}
