//! `multipart/related` bodies (MTOM/XOP, SOAP with attachments): a root document, XML or JSON as
//! the type's `type` parameter says, followed by the parts it refers to by `Content-ID`. The root
//! is read by the content profile the URL chose for it, as it would be alone; each other part is
//! scanned as an uploaded file's content is. Read whole as one document, the framing lines before
//! the root make every such body malformed XML.

use crate::parse::multipart;
use crate::policy::compile::compiled::{BodyKind, CompiledPolicy, MAX_ITEMS, Scratch};
use crate::signatures::Target;
use crate::violation::{Context, Violation, ViolationKind as K};

impl CompiledPolicy {
    /// Judges a `multipart/related` body whose root the profiles read as `kind`.
    pub(super) fn body_related(
        &self,
        body: &[u8],
        kind: BodyKind,
        boundary: &str,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) {
        let parts = match multipart::related_parts(body, boundary, MAX_ITEMS) {
            Ok(parts) => parts,
            Err(e) => {
                if !s.body_truncated {
                    self.push(
                        out,
                        Violation::new(K::MultipartMalformed, Context::Body).detail(e.to_string()),
                    );
                }
                // What cannot be split is still inspected, as one text.
                self.scan(s, out, Target::Body, Context::Body, None, body, &[], false);
                return;
            }
        };
        let mut parts = parts.into_iter();
        // The first part is the root unless the type's `start` names another; an attachment that
        // is the real root is still scanned below, only without its document's structure.
        if let Some((_, root)) = parts.next() {
            match kind {
                BodyKind::Xml(i) => self.body_xml(root, i, s, out),
                BodyKind::Json(i) => self.body_json(root, i, s, out),
                _ => self.scan(s, out, Target::Body, Context::Body, None, root, &[], false),
            }
        }
        for (_, content) in parts {
            let text = String::from_utf8_lossy(content);
            self.scan(
                s,
                out,
                Target::Body,
                Context::Body,
                None,
                text.as_bytes(),
                &[],
                false,
            );
        }
    }
}
