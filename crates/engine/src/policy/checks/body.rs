//! Phase 2 checks: the request body, buffered up to the inspection limit and parsed by the kind the
//! URL's content profiles chose (form, multipart, JSON, XML, or raw with signatures), and the
//! response-status check of phase 3.

use crate::openapi::{Arena, JsonBody};
use crate::parse::{coding, json, multipart, query, xml};
use crate::policy::compile::compiled::{BodyKind, CompiledPolicy, MAX_ITEMS, Scratch};
use crate::policy::decl::ParamLocation;
use crate::signatures::Target;
use crate::transaction::Step;
use crate::violation::{Context, Violation, ViolationKind as K};

impl CompiledPolicy {
    pub fn check_body_chunk(
        &self,
        chunk: &[u8],
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> Step {
        if s.grpc_profile.is_some() {
            return self.grpc_chunk(chunk, s, out);
        }
        if s.grpc_opaque.is_some() {
            return self.opaque_chunk(chunk, s, out);
        }
        s.body_len += chunk.len() as u64;
        let room = self.body_limit.saturating_sub(s.body.len());
        s.body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if s.body_len > self.body_limit as u64 {
            // Inspect what fits; the rest cannot be inspected, which is a violation of its own.
            self.check_inspection_overflow(self.body_limit as u64, out);
            s.body_truncated = true;
            self.check_body_end(s, out);
            return Step::PassRest;
        }
        Step::Release(0)
    }

    pub fn check_body_end(&self, s: &mut Scratch, out: &mut Vec<Violation>) {
        if s.grpc_profile.is_some() {
            return self.grpc_end(s, out);
        }
        if s.grpc_opaque.is_some() {
            return self.opaque_end(s, out);
        }
        // No plan, or an HTTP/2 body announced without a length that turned out empty (no body,
        // as the headers phase judged it).
        if s.body_kind.is_none() || (s.body_len == 0 && !s.expects_body) {
            return;
        }
        let kind = s.body_kind.take().unwrap_or(BodyKind::Signatures);
        let mut body = std::mem::take(&mut s.body);
        if let Some(c) = s.body_coding.take()
            && let Some((plain, cut)) = coding::inflate(c, &body, self.body_limit)
        {
            body = plain;
            s.body_truncated |= cut;
        }
        // The body's JSON is parsed once, by its first reader (the API schema or the signature
        // scan), and shared with the other.
        let arena = Arena::new();
        let json = JsonBody::new(&body, &arena);
        self.api_body(&json, s, out);
        // NUL is part of binary encodings (protobuf, images, compressed data): it is a finding in
        // text only, where it truncates a string for the application behind.
        if !matches!(kind, BodyKind::Form) && memchr::memchr(0, &body).is_some() && textual(&body) {
            self.protocol(out, "Null in request");
        }
        if let Some(f) = s.filetype.and_then(|i| self.filetypes.get(i))
            && f.post_len.is_some_and(|l| s.body_len > l)
        {
            self.push(
                out,
                Violation::new(K::PostDataLength, Context::Body)
                    .detail(format!("{} bytes", s.body_len)),
            );
        }
        let (ov, sig) = match s.url.and_then(|i| self.urls.get(i)) {
            Some(u) => (u.overrides.clone(), u.sig_check),
            None => (Vec::new(), true),
        };
        match kind {
            BodyKind::Form if s.boundary.is_some() => self.body_multipart(&body, s, out),
            BodyKind::Xml(_) | BodyKind::Json(_) if s.boundary.is_some() => {
                let boundary = s.boundary.take().unwrap_or_default();
                self.body_related(&body, kind, &boundary, s, out);
            }
            BodyKind::Form => {
                for (n, v, _) in query::pairs(&body, MAX_ITEMS) {
                    self.check_param(s, out, n, v, ParamLocation::FormData, true);
                }
                self.scan_whole_pairs(s, out, &body, Context::Body);
            }
            BodyKind::Json(i) => {
                self.body_json(&body, i, s, out);
                self.check_json_schema(i, &body, "", s, out);
            }
            BodyKind::Xml(i) => self.body_xml(&body, i, s, out),
            BodyKind::Signatures => {
                self.check_upload(s, out, None, &body);
                // A JSON document is never form-shaped: its first `=` is inside a string, after
                // a quote, which no form name holds.
                if sig && form_shaped(&body) {
                    // Read as a labelled form is, line by line (analytics beacons batch one
                    // event a line): each value, then the line's whole `k=v&k=v` string, not
                    // the body as one text, where a tokenizer reads the names, `=` and `&`
                    // glued to a value as an expression (`term=union select 关键字&…`).
                    for line in form_lines(&body) {
                        self.scan_form_values(s, out, line, &ov);
                        self.scan_whole_pairs(s, out, line, Context::Body);
                    }
                } else if sig {
                    self.scan_body(s, out, &json, &ov);
                }
            }
            BodyKind::Disallow | BodyKind::Ignore => {}
        }
        self.check_mandatory(s, out, true);
        drop(json);
        s.body = body;
        s.body.clear();
    }

    /// A body that is `name=value` pairs whatever its label (none, `text/plain`) is a form to the
    /// many frameworks that parse one by its shape: each value is also scanned as a parameter
    /// value, so that its views (base64, escapes) are those of the value alone, not of the
    /// `name=` text glued to it.
    fn scan_form_values(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        body: &[u8],
        ov: &[(u32, bool)],
    ) {
        for (n, v, _) in query::pairs(body, MAX_ITEMS) {
            let mut f = query::DecodeFlags::default();
            let v = query::decode(v, true, self.passes, &mut f);
            let n = query::decode(n, true, self.passes, &mut f);
            let name = String::from_utf8_lossy(&n);
            self.scan(
                s,
                out,
                Target::ParamValue,
                Context::Parameter,
                Some(&name),
                &v,
                ov,
                false,
            );
        }
    }

    fn body_multipart(&self, body: &[u8], s: &mut Scratch, out: &mut Vec<Violation>) {
        let boundary = s.boundary.clone().unwrap_or_default();
        match multipart::parts(body, &boundary, MAX_ITEMS) {
            Err(e) if !s.body_truncated => {
                self.protocol(out, "Bad multipart/form-data request parsing");
                self.push(
                    out,
                    Violation::new(K::MultipartMalformed, Context::Body).detail(e.to_string()),
                );
            }
            Err(_) => {}
            Ok(parts) => {
                for p in parts {
                    if odd_part(&p) {
                        self.protocol(out, "Bad multipart parameters parsing");
                    }
                    if p.value.contains(&0) {
                        self.push(
                            out,
                            Violation::new(K::ParameterMultipartNullValue, Context::Parameter)
                                .named(String::from_utf8_lossy(p.name)),
                        );
                    }
                    if let Some(f) = p.filename {
                        self.check_upload(s, out, Some(p.name), p.value);
                        for target in [Target::ParamValue, Target::Filename] {
                            let ctx = Context::Parameter;
                            self.scan(s, out, target, ctx, Some("filename"), f, &[], false);
                        }
                        let text = String::from_utf8_lossy(p.value);
                        self.scan(
                            s,
                            out,
                            Target::Body,
                            Context::Body,
                            Some(&String::from_utf8_lossy(p.name)),
                            text.as_bytes(),
                            &[],
                            false,
                        );
                        continue;
                    }
                    self.check_param(s, out, p.name, p.value, ParamLocation::FormData, false);
                }
            }
        }
    }

    pub(super) fn body_json(
        &self,
        body: &[u8],
        i: usize,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) {
        let Some(prof) = self.json.get(i) else {
            self.scan(s, out, Target::Body, Context::Body, None, body, &[], false);
            return;
        };
        if prof.max_total.exceeded(s.body_len) {
            self.push(
                out,
                Violation::new(K::JsonFormat, Context::Json)
                    .detail(format!("{} bytes of JSON", s.body_len)),
            );
        }
        let mut items: Vec<(String, Vec<u8>, Target)> = Vec::new();
        let mut visit = |it: json::Item| {
            if items.len() < MAX_ITEMS {
                match it {
                    json::Item::Key { pointer, key } => {
                        let name = format!("{pointer}/{key}");
                        if let Some(path) = json::key_path(pointer, key) {
                            items.push((name.clone(), path.into_bytes(), Target::KeyPath));
                        }
                        items.push((name, key.as_bytes().to_vec(), Target::ParamName))
                    }
                    json::Item::Value { pointer, value } => {
                        items.push((pointer.to_string(), value.as_bytes().to_vec(), Target::Json))
                    }
                }
            }
        };
        let res = if s.json_lines {
            json::walk_lines(body, &mut visit)
        } else {
            json::walk(body, &mut visit)
        };
        match res {
            Err(e) => {
                // A body that does not even start like a JSON document (a PDF, a base64 blob) was
                // mislabelled by its client rather than malformed: it is inspected as it is.
                let malformed = !s.body_truncated && json::starts_like_json(body);
                if malformed {
                    self.push(
                        out,
                        Violation::new(K::JsonMalformed, Context::Json)
                            .detail(e.to_string())
                            .snippet(body),
                    );
                }
                if prof.sig_check || !malformed {
                    let ov = &prof.overrides;
                    self.scan(s, out, Target::Body, Context::Json, None, body, ov, false);
                }
                return;
            }
            Ok(shape) => {
                let bad = prof.max_depth.exceeded(shape.depth as u64)
                    || prof.max_array.exceeded(shape.longest_array as u64)
                    || prof.max_value.exceeded(shape.longest_value as u64);
                if bad {
                    self.push(
                        out,
                        Violation::new(K::JsonFormat, Context::Json).detail(format!(
                            "depth {}, longest array {}, longest value {}",
                            shape.depth, shape.longest_array, shape.longest_value
                        )),
                    );
                }
            }
        }
        for (pointer, value, target) in items {
            if prof.as_params && target == Target::Json {
                let name = pointer.rsplit('/').next().unwrap_or("").to_string();
                self.check_param(
                    s,
                    out,
                    name.as_bytes(),
                    &value,
                    ParamLocation::FormData,
                    false,
                );
                continue;
            }
            if target == Target::Json {
                self.check_redirect(s, out, Context::Json, pointer.as_bytes(), &value, &value);
            }
            // A key path's characters are its keys' and the `.` between them, checked as such.
            if prof.meta_check
                && target != Target::KeyPath
                && let Some(c) = prof.table.first_bad(&value)
            {
                self.push(
                    out,
                    Violation::new(K::ParameterValueMetachar, Context::Json)
                        .named(pointer.clone())
                        .metachar(c),
                );
            }
            if prof.sig_check {
                self.scan(
                    s,
                    out,
                    target,
                    Context::Json,
                    Some(&pointer),
                    &value,
                    &prof.overrides,
                    false,
                );
            }
        }
    }

    pub(super) fn body_xml(
        &self,
        body: &[u8],
        i: usize,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) {
        let Some(prof) = self.xml.get(i) else {
            self.scan(s, out, Target::Body, Context::Body, None, body, &[], false);
            return;
        };
        let mut texts: Vec<Vec<u8>> = Vec::new();
        match xml::walk(body, prof.max_depth, |t| {
            if texts.len() < MAX_ITEMS && !t.iter().all(u8::is_ascii_whitespace) {
                texts.push(t.to_vec());
            }
        }) {
            Err(e) if !s.body_truncated => {
                self.push(
                    out,
                    Violation::new(K::XmlMalformed, Context::Xml)
                        .detail(e.to_string())
                        .snippet(body),
                );
            }
            Err(_) => {}
            Ok(f) => {
                let bad = (f.has_doctype && !prof.allow_dtd)
                    || (f.has_external_ref && !prof.allow_external)
                    || (f.has_pi && !prof.allow_pi)
                    || (f.has_cdata && !prof.allow_cdata);
                if bad {
                    self.push(
                        out,
                        Violation::new(K::XmlFormat, Context::Xml).detail(
                            "DTD, external reference, CDATA or processing instruction not allowed",
                        ),
                    );
                }
            }
        }
        let ov = &prof.overrides;
        if prof.sig_check {
            self.scan(s, out, Target::Xml, Context::Xml, None, body, ov, false);
        }
        for t in texts {
            if prof.meta_check
                && let Some(c) = prof.table.first_bad(&t)
            {
                self.push(
                    out,
                    Violation::new(K::ParameterValueMetachar, Context::Xml).metachar(c),
                );
            }
            if prof.sig_check {
                // The application reads the text with its references resolved (`&lt;` is `<`,
                // `&amp;#60;` is `&#60;`): that is what it may render or run, and what the
                // views decode further.
                let text = crate::normalize::decode_html_entities(&t);
                self.scan(s, out, Target::Xml, Context::Xml, None, &text, ov, false);
            }
        }
    }

    /// Phase 3: an error status (4xx/5xx) not in `general.allowedResponseCodes` is
    /// VIOL_HTTP_RESPONSE_STATUS.
    pub fn check_response_headers(
        &self,
        status: u16,
        _h: &http::HeaderMap,
        out: &mut Vec<Violation>,
    ) {
        if status >= 400 && !self.allowed_codes.contains(&status) {
            self.push(
                out,
                Violation::new(K::HttpResponseStatus, Context::Request)
                    .detail(format!("response status {status}")),
            );
        }
    }
}

/// Text as a client writes it: UTF-8 without control bytes other than white space (and NUL,
/// the byte in question).
fn textual(body: &[u8]) -> bool {
    body.iter()
        .all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r' | 0))
        && std::str::from_utf8(body).is_ok()
}

/// A part a browser would not send: a field name with `;`, `&`, `=`, `"`, `\` or a control byte
/// (read differently by parsers that split the disposition on them), a file name with a
/// backslash, quote or control byte (`1.j\s\p` hides `1.jsp` from a check on the extension),
/// a `_charset_` field naming a charset no decoder knows (UTF-7 smuggles markup past filters),
/// or a header block of the kind [`odd_part_headers`] describes.
fn odd_part(p: &multipart::Part<'_>) -> bool {
    let control = |b: &u8| *b < 0x20 || *b == 0x7f;
    let odd_name = p
        .name
        .iter()
        .any(|b| matches!(b, b';' | b'&' | b'=' | b'"' | b'\\') || control(b));
    let odd_file = p
        .filename
        .is_some_and(|f| f.iter().any(|b| matches!(b, b'"' | b'\\') || control(b)));
    let charset =
        p.name == b"_charset_" && encoding_rs::Encoding::for_label(p.value.trim_ascii()).is_none();
    odd_name || odd_file || charset || odd_part_headers(p.headers)
}

/// Part headers that make the application read other bytes than the scan did: a
/// `Content-Transfer-Encoding` that transforms the content (`base64`, `quoted-printable`: a
/// parser that still decodes them, as mail libraries do, gets a value the scan saw encoded;
/// RFC 7578 dropped the header from form data and browsers never send it; the identity codings
/// `7bit`, `8bit` and `binary` that some HTTP client libraries still write change nothing), or a
/// part `Content-Type` whose charset is not ASCII-compatible or that no browser knows (`utf-7`,
/// `utf-16`, EBCDIC `ibm037`: markup and quotes the application decodes are other bytes here).
fn odd_part_headers(headers: &[u8]) -> bool {
    headers.split(|&b| b == b'\n').any(|line| {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return false;
        };
        let (name, value) = (line[..colon].trim_ascii(), line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"content-transfer-encoding") {
            return !["7bit", "8bit", "binary"]
                .iter()
                .any(|c| value.eq_ignore_ascii_case(c.as_bytes()));
        }
        name.eq_ignore_ascii_case(b"content-type")
            && charset_param(value).is_some_and(|label| {
                encoding_rs::Encoding::for_label(label).is_none_or(|e| !e.is_ascii_compatible())
            })
    })
}

/// The `charset` parameter of a media type, unquoted.
fn charset_param(media_type: &[u8]) -> Option<&[u8]> {
    media_type.split(|&b| b == b';').skip(1).find_map(|p| {
        let eq = p.iter().position(|&b| b == b'=')?;
        p[..eq]
            .trim_ascii()
            .eq_ignore_ascii_case(b"charset")
            .then(|| p[eq + 1..].trim_ascii())
            .map(|v| v.strip_prefix(b"\"").unwrap_or(v))
            .map(|v| v.strip_suffix(b"\"").unwrap_or(v))
    })
}

/// Whether an unlabelled body reads as a URL-encoded form: `name=value` pairs joined by `&`, no
/// whitespace or control bytes, every pair holding its `=` and a name such as forms send
/// (`user`, `items[0].id`, `a%5Bb%5D`), so JSON or text without spaces is not read as one; or
/// lines of such forms (`\n` or `\r\n` after each), as analytics beacons batch their events.
fn form_shaped(body: &[u8]) -> bool {
    let name_byte = |b: &u8| b.is_ascii_alphanumeric() || b"_-.[]%".contains(b);
    // The first name and its `=` settle most bodies that are not forms (a JSON document fails at
    // its first byte) without a walk over all of it.
    let first = body.iter().take_while(|b| name_byte(b)).count();
    if first == 0 || body.get(first) != Some(&b'=') {
        return false;
    }
    let line_shaped = |line: &[u8]| {
        query::pairs(line, MAX_ITEMS)
            .all(|(n, _, eq)| eq && !n.is_empty() && n.iter().all(name_byte))
            && line.iter().all(|&b| b > b' ' && b < 0x7f)
    };
    let mut lines = form_lines(body).peekable();
    lines.peek().is_some() && lines.all(line_shaped)
}

/// The non-empty lines of `body`, without their line ends.
fn form_lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    body.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
}
