//! The SOAP request envelope, parsed leniently and namespace-aware (quick-xml `NsReader`): any
//! prefixes, `Body` under a different prefix than `Envelope`, the interface taken from the
//! namespace of the body's first child (`urn:iControl:Management/Zone` → `Management.Zone`), the
//! method from its local name, and the parameters as a plain element tree ([`Node`]) that the
//! decoders read by structure (array items may be named anything, `arrayType` is not needed).
//! This is the parser the `soap_envelope` fuzz target drives.
//!
//! Limits: [`MAX_DEPTH`] nested elements and [`MAX_NODES`] elements per envelope.
//!
//! Imports: quick-xml only.

use quick_xml::NsReader;
use quick_xml::events::Event;
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
    // stack of open elements below the operation element; index 0 is the operation itself
    let mut stack: Vec<Node> = Vec::new();
    let mut state = State::BeforeEnvelope;
    let mut op_ns = String::new();
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
                        op_ns = ns.unwrap_or_default();
                        stack.push(Node {
                            name: local,
                            ..Node::default()
                        });
                        if empty {
                            state = State::Done;
                        } else {
                            state = State::InOperation;
                        }
                    }
                    State::InOperation => {
                        nodes += 1;
                        if nodes > MAX_NODES {
                            return Err(bad(format!("more than {MAX_NODES} elements")));
                        }
                        if stack.len() >= MAX_DEPTH {
                            return Err(bad(format!("elements nested deeper than {MAX_DEPTH}")));
                        }
                        let mut node = Node {
                            name: local,
                            ..Node::default()
                        };
                        for a in e.attributes() {
                            let a = a.map_err(|e| bad(format!("bad attribute: {e}")))?;
                            let (ans, alocal) = r.resolver().resolve_attribute(a.key);
                            let is_xsi =
                                matches!(ans, ResolveResult::Bound(n) if n.as_ref() == XSI);
                            if is_xsi && alocal.as_ref() == "nil" {
                                let v = a
                                    .normalized_value(quick_xml::XmlVersion::default())
                                    .map_err(|e| bad(format!("bad attribute: {e}")))?;
                                node.nil = matches!(v.trim(), "true" | "1");
                            }
                        }
                        if empty {
                            attach(&mut stack, node);
                        } else {
                            stack.push(node);
                        }
                    }
                    State::Done => {}
                }
            }
            Event::End(_) => match state {
                State::InOperation => {
                    if stack.len() == 1 {
                        state = State::Done;
                    } else if let Some(node) = stack.pop() {
                        attach(&mut stack, node);
                    }
                }
                State::InBody => state = State::Done,
                _ => {}
            },
            Event::Text(t) => push_text(&mut stack, state, &t.xml10_content()),
            Event::CData(t) => push_text(&mut stack, state, &t.xml10_content()),
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
                push_text(&mut stack, state, &ch);
            }
            Event::DocType(_) => return Err(bad("DOCTYPE is not allowed in SOAP messages")),
            Event::Eof => break,
            _ => {}
        }
        if state == State::Done {
            break;
        }
    }
    let op = match (state, stack.into_iter().next()) {
        (State::Done, Some(op)) => op,
        (State::BeforeEnvelope, _) => {
            return Err(bad(
                "the body holds no XML element: not a SOAP 1.1 Envelope",
            ));
        }
        _ => return Err(bad("the SOAP Body holds no operation element")),
    };
    let interface = interface_of(&op_ns)
        .ok_or_else(|| bad(format!("unknown interface namespace \"{op_ns}\"")))?;
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
    InOperation,
    Done,
}

fn attach(stack: &mut [Node], node: Node) {
    if let Some(parent) = stack.last_mut() {
        parent.children.push(node);
    }
}

fn push_text(stack: &mut [Node], state: State, s: &str) {
    if state == State::InOperation
        && stack.len() > 1
        && let Some(n) = stack.last_mut()
    {
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

    /// Replays the `soap_envelope` fuzz seeds through the parser (what the fuzz target runs).
    #[test]
    fn fuzz_seeds_parse_or_fail_cleanly() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/soap_envelope");
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
