//! The WSDL documents served at `?WSDL=Management.Zone` and `?WSDL=Management.ResourceRecord`,
//! built from the method tables so the contract and the dispatch cannot drift apart. They follow
//! the BIG-IP layout suds expects: rpc/encoded, `targetNamespace="urn:iControl"`, dotted type
//! names, arrays as `SOAP-ENC:Array` restrictions carrying `wsdl:arrayType` (bigsuds finds list
//! parameters through it), structs as `xsd:all`, messages `<Interface>.<op>Request/Response` with
//! the F5 part names and the output part `return`.

use super::rr_methods::RR_TYPES;

/// One operation: input parts (name, type) and the output type (`None` for void).
struct Op {
    name: String,
    inputs: Vec<(String, String)>,
    output: Option<&'static str>,
}

fn op(name: &str, inputs: &[(&str, &str)], output: Option<&'static str>) -> Op {
    Op {
        name: name.to_string(),
        inputs: inputs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        output,
    }
}

fn array(name: &str, elem: &str) -> String {
    format!(
        r#"<xsd:complexType name="{name}"><xsd:complexContent><xsd:restriction base="SOAP-ENC:Array"><xsd:attribute ref="SOAP-ENC:arrayType" wsdl:arrayType="{elem}[]"/></xsd:restriction></xsd:complexContent></xsd:complexType>"#
    )
}

fn strukt(name: &str, fields: &[(&str, &str)]) -> String {
    let mut s = format!(r#"<xsd:complexType name="{name}"><xsd:all>"#);
    for (f, ty) in fields {
        let ty = if ty.contains(':') {
            ty.to_string()
        } else {
            format!("xsd:{ty}")
        };
        s.push_str(&format!(r#"<xsd:element name="{f}" type="{ty}"/>"#));
    }
    s.push_str("</xsd:all></xsd:complexType>");
    s
}

fn common_types() -> Vec<String> {
    vec![
        array("Common.StringSequence", "xsd:string"),
        array("Common.StringSequenceSequence", "tns:Common.StringSequence"),
        array("Common.BooleanSequence", "xsd:boolean"),
        strukt(
            "Management.ViewZone",
            &[("view_name", "string"), ("zone_name", "string")],
        ),
        array("Management.ViewZoneSequence", "tns:Management.ViewZone"),
    ]
}

/// The WSDL of `interface`, or `None` for an interface not served.
pub fn document(interface: &str) -> Option<String> {
    let (mut types, ops) = match interface {
        "Management.Zone" => zone_contract(),
        "Management.ResourceRecord" => rr_contract(),
        "System.Session" => (
            Vec::new(),
            vec![op("get_session_identifier", &[], Some("xsd:long"))],
        ),
        _ => return None,
    };
    types.splice(0..0, common_types());
    Some(render(interface, &types, &ops))
}

fn zone_contract() -> (Vec<String>, Vec<Op>) {
    let mut zone_type = String::from(
        r#"<xsd:simpleType name="Management.ZoneType"><xsd:restriction base="xsd:string">"#,
    );
    for t in crate::zone::ZONE_TYPES {
        zone_type.push_str(&format!(r#"<xsd:enumeration value="{t}"/>"#));
    }
    zone_type.push_str("</xsd:restriction></xsd:simpleType>");
    let types = vec![
        zone_type,
        strukt(
            "Management.ZoneInfo",
            &[
                ("view_name", "string"),
                ("zone_name", "string"),
                ("zone_type", "tns:Management.ZoneType"),
                ("zone_file", "string"),
                ("option_seq", "tns:Common.StringSequence"),
            ],
        ),
        array("Management.ZoneInfoSequence", "tns:Management.ZoneInfo"),
    ];
    let vz = ("view_zones", "tns:Management.ViewZoneSequence");
    let ops = vec![
        op("zone_exist", &[vz], Some("tns:Common.BooleanSequence")),
        op(
            "add_zone_text",
            &[
                ("zone_records", "tns:Management.ZoneInfoSequence"),
                ("text", "tns:Common.StringSequenceSequence"),
                ("sync_ptrs", "tns:Common.BooleanSequence"),
            ],
            None,
        ),
        op(
            "get_zone_v2",
            &[vz],
            Some("tns:Management.ZoneInfoSequence"),
        ),
        op("delete_zone", &[vz], None),
    ];
    (types, ops)
}

fn rr_contract() -> (Vec<String>, Vec<Op>) {
    let mut types = Vec::new();
    let vz = (
        "view_zones".to_string(),
        "tns:Management.ViewZoneSequence".to_string(),
    );
    let mut ops = vec![op(
        "get_rrs",
        &[("view_zones", "tns:Management.ViewZoneSequence")],
        Some("tns:Common.StringSequenceSequence"),
    )];
    for t in RR_TYPES {
        types.push(strukt(t.ty, t.fields));
        types.push(array(
            &format!("{}Sequence", t.ty),
            &format!("tns:{}", t.ty),
        ));
        types.push(array(
            &format!("{}SequenceSequence", t.ty),
            &format!("tns:{}Sequence", t.ty),
        ));
        let seqseq = format!("tns:{}SequenceSequence", t.ty);
        let sync = (
            "sync_ptrs".to_string(),
            "tns:Common.BooleanSequence".to_string(),
        );
        let mut one = vec![vz.clone(), (t.param.to_string(), seqseq.clone())];
        let mut upd = vec![
            vz.clone(),
            ("old_records".to_string(), seqseq.clone()),
            ("new_records".to_string(), seqseq),
        ];
        if t.sync {
            one.push(sync.clone());
            upd.push(sync);
        }
        for verb in ["add", "delete"] {
            ops.push(Op {
                name: format!("{verb}_{}", t.suffix),
                inputs: one.clone(),
                output: None,
            });
        }
        ops.push(Op {
            name: format!("update_{}", t.suffix),
            inputs: upd,
            output: None,
        });
    }
    (types, ops)
}

fn render(interface: &str, types: &[String], ops: &[Op]) -> String {
    let ns = format!("urn:iControl:{}", interface.replacen('.', "/", 1));
    let mut w = String::new();
    w.push_str(&format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions name="{interface}" targetNamespace="urn:iControl" xmlns:tns="urn:iControl" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:SOAP-ENC="http://schemas.xmlsoap.org/soap/encoding/" xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" xmlns="http://schemas.xmlsoap.org/wsdl/">
<types><xsd:schema targetNamespace="urn:iControl">
"#
    ));
    for t in types {
        w.push_str(t);
        w.push('\n');
    }
    w.push_str("</xsd:schema></types>\n");
    for o in ops {
        w.push_str(&format!(
            r#"<message name="{interface}.{}Request">"#,
            o.name
        ));
        for (p, ty) in &o.inputs {
            w.push_str(&format!(r#"<part name="{p}" type="{ty}"/>"#));
        }
        w.push_str("</message>\n");
        match o.output {
            Some(ty) => w.push_str(&format!(
                r#"<message name="{interface}.{}Response"><part name="return" type="{ty}"/></message>"#,
                o.name
            )),
            None => w.push_str(&format!(r#"<message name="{interface}.{}Response"/>"#, o.name)),
        }
        w.push('\n');
    }
    w.push_str(&format!(r#"<portType name="{interface}PortType">"#));
    for o in ops {
        w.push_str(&format!(
            r#"<operation name="{n}"><input message="tns:{interface}.{n}Request"/><output message="tns:{interface}.{n}Response"/></operation>"#,
            n = o.name
        ));
    }
    w.push_str("</portType>\n");
    w.push_str(&format!(
        r#"<binding name="{interface}Binding" type="tns:{interface}PortType"><soap:binding style="rpc" transport="http://schemas.xmlsoap.org/soap/http"/>"#
    ));
    let body = format!(
        r#"<soap:body use="encoded" namespace="{ns}" encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"/>"#
    );
    for o in ops {
        w.push_str(&format!(
            r#"<operation name="{}"><soap:operation soapAction="{ns}"/><input>{body}</input><output>{body}</output></operation>"#,
            o.name
        ));
    }
    w.push_str("</binding>\n");
    w.push_str(&format!(
        r#"<service name="{interface}"><documentation>{interface} interface of the Portcullis iControl portal</documentation><port name="{interface}Port" binding="tns:{interface}Binding"><soap:address location="https://localhost/iControl/iControlPortal.cgi"/></port></service>
</definitions>
"#
    ));
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_declare_every_operation_and_array_type() {
        let z = document("Management.Zone").unwrap();
        for m in super::super::zone_methods::METHODS {
            assert!(z.contains(&format!(r#"<operation name="{m}">"#)), "{m}");
        }
        assert!(z.contains(r#"wsdl:arrayType="tns:Management.ViewZone[]""#));
        let rr = document("Management.ResourceRecord").unwrap();
        for m in [
            "get_rrs",
            "add_a",
            "update_a",
            "delete_a",
            "add_txt",
            "delete_srv",
        ] {
            assert!(rr.contains(&format!(r#"<operation name="{m}">"#)), "{m}");
        }
        assert!(rr.contains(r#"<message name="Management.ResourceRecord.update_aRequest"><part name="view_zones" type="tns:Management.ViewZoneSequence"/><part name="old_records" type="tns:Management.ARecordSequenceSequence"/><part name="new_records" type="tns:Management.ARecordSequenceSequence"/><part name="sync_ptrs" type="tns:Common.BooleanSequence"/></message>"#));
        assert!(
            document("System.Session")
                .unwrap()
                .contains("get_session_identifier")
        );
        assert!(document("LocalLB.Pool").is_none());
        // well-formed XML
        let mut r = quick_xml::Reader::from_str(&rr);
        loop {
            match r.read_event() {
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
    }
}
