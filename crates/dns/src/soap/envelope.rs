//! The SOAP request envelope, parsed leniently and namespace-aware (quick-xml `NsReader`): any
//! prefixes, `Body` under a different prefix than `Envelope`, the interface taken from the
//! namespace of the body's first child (`urn:iControl:Management/Zone` → `Management.Zone`), the
//! method from its local name, and the parameters as a plain element tree ([`Node`]) that the
//! decoders read by structure (array items may be named anything, `arrayType` is not needed).
//! This is the parser the `soap_envelope` fuzz target drives.
//!
//! Multi-ref encoding (`href="#id1"` pointing at a later `<x id="id1">` child of the Body, as
//! .NET and Axis SOAP stacks write rpc/encoded structs and arrays) is resolved before decoding.
//!
//! Limits: [`MAX_DEPTH`] nested elements and [`MAX_NODES`] elements per envelope (and per
//! reference expansion).

use std::collections::HashMap;

use quick_xml::NsReader;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;

/// Deepest element nesting accepted.
pub const MAX_DEPTH: usize = 32;
/// Most elements accepted in one envelope.
pub const MAX_NODES: usize = 200_000;

const SOAP_ENV: &str = "http://schemas.xmlsoap.org/soap/envelope/";
const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// One element of the call: local name, text, child elements, and `xsi:nil`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub text: String,
    pub children: Vec<Node>,
    pub nil: bool,
    /// The multi-ref `id` of a top-level Body element (SOAP 1.1 section 5 encoding).
    pub id: Option<String>,
    /// A multi-ref reference (`href="#id"`), resolved before the call is returned.
    pub href: Option<String>,
}

/// A decoded SOAP call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The namespace of the operation element (`urn:iControl:Management/Zone`).
    pub namespace: String,
    /// The dotted interface name (`Management.Zone`).
    pub interface: String,
    /// The operation's local name (`add_a`).
    pub method: String,
    /// The parameter elements, in order.
    pub params: Vec<Node>,
}

impl Call {
    /// The parameter named `name`, else the one at `pos` (rpc/encoded parts are positional).
    pub fn param(&self, name: &str, pos: usize) -> Option<&Node> {
        self.params
            .iter()
            .find(|p| p.name == name)
            .or_else(|| self.params.get(pos))
    }
}

/// Why an envelope was rejected (answered as a `Client` fault).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed SOAP request: {0}")]
pub struct EnvelopeError(pub String);

fn bad(msg: impl Into<String>) -> EnvelopeError {
    EnvelopeError(msg.into())
}

/// Parses a SOAP 1.1 request envelope.
pub fn parse_request(body: &[u8]) -> Result<Call, EnvelopeError> {
    let text = std::str::from_utf8(body).map_err(|_| bad("the body is not UTF-8"))?;
    let mut r = NsReader::from_str(text);
    // open elements inside the Body; index 0 is the current child of the Body
    let mut stack: Vec<Node> = Vec::new();
    // finished children of the Body: the operation, then any multi-ref (`id=`) elements
    let mut roots: Vec<Node> = Vec::new();
    let mut state = State::BeforeEnvelope;
    let mut op_ns = None;
    let mut nodes = 0usize;
    loop {
        let (ns, ev) = r
            .read_resolved_event()
            .map_err(|e| bad(format!("XML error: {e}")))?;
        let ns = match ns {
            ResolveResult::Bound(n) => Some(n.as_ref().to_string()),
            ResolveResult::Unbound => None,
            ResolveResult::Unknown(p) => {
                return Err(bad(format!("unknown namespace prefix \"{p}\"")));
            }
        };
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(ev, Event::Empty(_));
                let local = e.local_name().as_ref().to_string();
                match state {
                    State::BeforeEnvelope => {
                        if local != "Envelope" || ns.as_deref() != Some(SOAP_ENV) {
                            return Err(bad("the root element is not a SOAP 1.1 Envelope"));
                        }
                        state = if empty {
                            State::Done
                        } else {
                            State::InEnvelope
                        };
                    }
                    State::InEnvelope => {
                        if local == "Body" && ns.as_deref() == Some(SOAP_ENV) {
                            state = if empty { State::Done } else { State::InBody };
                        } else if !empty {
                            r.read_to_end(e.name())
                                .map_err(|e| bad(format!("XML error: {e}")))?;
                        }
                    }
                    State::InBody => {
                        nodes += 1;
                        if nodes > MAX_NODES {
                            return Err(bad(format!("more than {MAX_NODES} elements")));
                        }
                        if stack.len() >= MAX_DEPTH {
                            return Err(bad(format!("elements nested deeper than {MAX_DEPTH}")));
                        }
                        if stack.is_empty() && op_ns.is_none() {
                            op_ns = Some(ns.unwrap_or_default());
                        }
                        let node = element(&r, e, local)?;
                        if !empty {
                            stack.push(node);
                        } else if stack.is_empty() {
                            roots.push(node);
                        } else {
                            attach(&mut stack, node);
                        }
                    }
                    State::Done => {}
                }
            }
            Event::End(_) if state == State::InBody => match stack.pop() {
                None => state = State::Done,
                Some(node) if stack.is_empty() => roots.push(node),
                Some(node) => attach(&mut stack, node),
            },
            Event::Text(t) => push_text(&mut stack, &t.xml10_content()),
            Event::CData(t) => push_text(&mut stack, &t.xml10_content()),
            Event::GeneralRef(g) => {
                let ch = match g.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    _ => {
                        let name = g.xml10_content();
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or_else(|| bad(format!("unknown entity &{name};")))?
                            .to_string()
                    }
                };
                push_text(&mut stack, &ch);
            }
            Event::DocType(_) => return Err(bad("DOCTYPE is not allowed in SOAP messages")),
            Event::Eof => break,
            _ => {}
        }
        if state == State::Done {
            break;
        }
    }
    if state == State::BeforeEnvelope {
        return Err(bad(
            "the body holds no XML element: not a SOAP 1.1 Envelope",
        ));
    }
    if state != State::Done {
        return Err(bad("the envelope holds no complete SOAP Body"));
    }
    let mut roots = roots.into_iter();
    let (Some(mut op), Some(op_ns)) = (roots.next(), op_ns) else {
        return Err(bad("the SOAP Body holds no operation element"));
    };
    let interface = interface_of(&op_ns)
        .ok_or_else(|| bad(format!("unknown interface namespace \"{op_ns}\"")))?;
    let refs: HashMap<String, Node> = roots
        .filter_map(|n| n.id.clone().map(|id| (id, n)))
        .collect();
    let mut budget = MAX_NODES;
    for p in &mut op.children {
        resolve_refs(p, &refs, 0, &mut budget)?;
    }
    Ok(Call {
        namespace: op_ns,
        interface,
        method: op.name,
        params: op.children,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    BeforeEnvelope,
    InEnvelope,
    InBody,
    Done,
}

/// A new node from a start tag: `xsi:nil`, and the multi-ref `id` / `href` attributes.
fn element(r: &NsReader<&[u8]>, e: &BytesStart<'_>, name: String) -> Result<Node, EnvelopeError> {
    let mut node = Node {
        name,
        ..Node::default()
    };
    for a in e.attributes() {
        let a = a.map_err(|e| bad(format!("bad attribute: {e}")))?;
        let (ans, alocal) = r.resolver().resolve_attribute(a.key);
        let value = || {
            a.normalized_value(quick_xml::XmlVersion::default())
                .map(|v| v.trim().to_string())
                .map_err(|e| bad(format!("bad attribute: {e}")))
        };
        match (ans, alocal.as_ref()) {
            (ResolveResult::Bound(n), "nil") if n.as_ref() == XSI => {
                node.nil = matches!(value()?.as_str(), "true" | "1");
            }
            (ResolveResult::Unbound, "id") => node.id = Some(value()?),
            (ResolveResult::Unbound, "href") => node.href = Some(value()?),
            _ => {}
        }
    }
    Ok(node)
}

/// Replaces `href="#id"` references by the content of the multi-ref element with that `id`,
/// within the depth limit and a total node budget (shared references cannot blow up).
fn resolve_refs(
    node: &mut Node,
    refs: &HashMap<String, Node>,
    depth: usize,
    budget: &mut usize,
) -> Result<(), EnvelopeError> {
    if depth > MAX_DEPTH {
        return Err(bad(format!("references nested deeper than {MAX_DEPTH}")));
    }
    *budget = budget.checked_sub(1).ok_or_else(|| {
        bad(format!(
            "references expand to more than {MAX_NODES} elements"
        ))
    })?;
    if let Some(href) = node.href.take() {
        let target = href
            .strip_prefix('#')
            .and_then(|id| refs.get(id))
            .ok_or_else(|| bad(format!("unresolved reference href=\"{href}\"")))?;
        node.text = target.text.clone();
        node.children = target.children.clone();
        node.nil = target.nil;
    }
    for c in &mut node.children {
        resolve_refs(c, refs, depth + 1, budget)?;
    }
    Ok(())
}

fn attach(stack: &mut [Node], node: Node) {
    if let Some(parent) = stack.last_mut() {
        parent.children.push(node);
    }
}

fn push_text(stack: &mut [Node], s: &str) {
    if let Some(n) = stack.last_mut() {
        n.text.push_str(s);
    }
}

/// `urn:iControl:Management/Zone` → `Management.Zone`.
pub fn interface_of(ns: &str) -> Option<String> {
    let rest = ns.strip_prefix("urn:iControl:")?;
    let (module, iface) = rest.split_once('/')?;
    if module.is_empty() || iface.is_empty() || iface.contains('/') {
        return None;
    }
    Some(format!("{module}.{iface}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_envelope_bigsuds_sends() {
        let xml = r#"<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:ns0="urn:iControl:Management/ResourceRecord" xmlns:ns1="urn:iControl" xmlns:ns2="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ns3="http://www.w3.org/2001/XMLSchema"><SOAP-ENV:Header/><ns2:Body><ns0:add_a>
  <view_zones xsi:type="ns1:Management.ViewZoneSequence"><items xsi:type="ns1:Management.ViewZone"><view_name xsi:type="ns3:string">external</view_name><zone_name xsi:type="ns3:string">example.com.</zone_name></items></view_zones>
  <a_records><items><items><domain_name>a&amp;b&#46;</domain_name></items></items></a_records>
  <sync_ptrs xsi:type="ns1:Common.BooleanSequence"><items xsi:type="ns3:boolean">False</items></sync_ptrs>
  <option_seq xsi:nil="true"/></ns0:add_a></ns2:Body></SOAP-ENV:Envelope>"#;
        let call = parse_request(xml.as_bytes()).unwrap();
        assert_eq!(call.interface, "Management.ResourceRecord");
        assert_eq!(call.method, "add_a");
        assert_eq!(call.params.len(), 4);
        let vz = &call.param("view_zones", 0).unwrap().children[0];
        assert_eq!(vz.children[1].text, "example.com.");
        let a = &call.params[1].children[0].children[0].children[0];
        assert_eq!(a.text, "a&b.");
        assert!(call.params[3].nil);
    }

    #[test]
    fn rejects_what_is_not_a_soap_call() {
        for (xml, needle) in [
            ("<a/>", "not a SOAP 1.1 Envelope"),
            ("not xml", "not a SOAP"),
            (
                r#"<E:Envelope xmlns:E="http://schemas.xmlsoap.org/soap/envelope/"><E:Body/></E:Envelope>"#,
                "no operation",
            ),
            (
                r#"<E:Envelope xmlns:E="http://schemas.xmlsoap.org/soap/envelope/"><E:Body><m:x xmlns:m="urn:other"/></E:Body></E:Envelope>"#,
                "unknown interface",
            ),
            (
                r#"<E:Envelope xmlns:E="http://schemas.xmlsoap.org/soap/envelope/"><E:Body><q:x/></E:Body></E:Envelope>"#,
                "unknown namespace prefix",
            ),
            (r#"<!DOCTYPE x [<!ENTITY a "b">]><E:Envelope/>"#, "DOCTYPE"),
        ] {
            let e = parse_request(xml.as_bytes()).unwrap_err().to_string();
            assert!(e.contains(needle), "{xml}: {e}");
        }
        let deep = format!(
            r#"<E:Envelope xmlns:E="http://schemas.xmlsoap.org/soap/envelope/"><E:Body><m:x xmlns:m="urn:iControl:Management/Zone">{}{}</m:x></E:Body></E:Envelope>"#,
            "<a>".repeat(100),
            "</a>".repeat(100)
        );
        assert!(
            parse_request(deep.as_bytes())
                .unwrap_err()
                .0
                .contains("deeper")
        );
    }

    #[test]
    fn resolves_multi_ref_encoding_as_dotnet_writes_it() {
        let xml = r##"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/"><soap:Body>
<q1:zone_exist xmlns:q1="urn:iControl:Management/Zone"><view_zones href="#id1"/></q1:zone_exist>
<soapenc:Array id="id1" soapenc:arrayType="q2:Management.ViewZone[1]" xmlns:q2="urn:iControl"><Item href="#id2"/></soapenc:Array>
<q3:Management.ViewZone id="id2" xmlns:q3="urn:iControl"><view_name>external</view_name><zone_name>example.com.</zone_name></q3:Management.ViewZone>
</soap:Body></soap:Envelope>"##;
        let call = parse_request(xml.as_bytes()).unwrap();
        assert_eq!(call.method, "zone_exist");
        let vz = &call.params[0].children[0];
        assert_eq!(vz.children[1].text, "example.com.");
        let dangling = xml.replace("href=\"#id2\"", "href=\"#nope\"");
        assert!(
            parse_request(dangling.as_bytes())
                .unwrap_err()
                .0
                .contains("unresolved reference")
        );
        let cyclic = xml.replace(
            "<view_name>external</view_name>",
            "<view_name href=\"#id2\"/>",
        );
        assert!(
            parse_request(cyclic.as_bytes())
                .unwrap_err()
                .0
                .contains("deeper")
        );
    }

    /// Replays the `soap_envelope` fuzz seeds through the parser (what the fuzz target runs).
    #[test]
    fn fuzz_seeds_parse_or_fail_cleanly() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/seeds/soap_envelope"
        );
        let mut ok = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            if let Ok(call) = parse_request(&bytes) {
                assert!(!call.method.is_empty() && call.interface.contains('.'));
                ok += 1;
            }
        }
        assert!(ok >= 5, "the well-formed seeds parse");
    }
}
